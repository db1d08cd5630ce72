"""What a batch finds in its output root (batch/leftovers.py): leftovers of killed processes of the tool
removed and nothing else, a report a dead batch left building shown as interrupted."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ndcg_report.batch.history import read_history, read_status
from ndcg_report.working_folders import OWNED_MARKER
from tests.helpers import NOBODY, as_root, cli, one_line, plant_staging, small_config, wait_for

TOKEN = "0123456789abcdef0123456789abcdef"


def start_batch(config: Path) -> subprocess.Popen:
    """A batch in a session of its own (so that killing it does not kill its children by group)."""
    return subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "batch", str(config)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, cwd=config.parent)


def children_of(pid: int) -> list[int]:
    found = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        found += [int(child) for child in Path(task).read_text().split()]
    return found


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_a_batch_killed_alone_takes_its_build_along_and_shows_as_interrupted(tmp_path):
    config = small_config(tmp_path, ("r1",))
    reports = yaml.safe_load(config.read_text())
    reports["reports"].append({**reports["reports"][0], "name": "r2", "run": str(tmp_path / "missing.txt")})
    config.write_text(yaml.safe_dump(reports))  # r2 fails at once when its turn comes
    batch = start_batch(config)
    assert wait_for(lambda: glob.glob(str(tmp_path / "out" / ".r1.staging-*")), 60), batch.stderr.read().decode()
    builds = children_of(batch.pid)
    assert builds
    assert ">building</span>" in (tmp_path / "out" / "index.html").read_text()
    batch.kill()  # the batch process alone, not its group (as an OOM killer may)
    batch.wait()
    assert wait_for(lambda: not any(running(pid) for pid in builds), 20), "the build outlived its batch"
    time.sleep(2)
    assert not (tmp_path / "out" / "r1" / "report.html").exists()
    for left in glob.glob(str(tmp_path / "out" / ".r1.staging-*")):  # gone, or marked for the next clean-up
        assert (Path(left) / OWNED_MARKER).is_file(), sorted(p.name for p in Path(left).iterdir())
    assert read_status(tmp_path / "out", "r1")["status"] == "running"  # what the dead batch left
    result = cli("batch", config, "--index", cwd=tmp_path)  # rewrite the index only: no batch holds the lock
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "out" / "index.html").read_text()
    assert ">interrupted</span>" in page and "was killed before it finished" in page and "not built yet" in page
    assert read_status(tmp_path / "out", "r1")["step"] == "interrupted"
    result = cli("batch", config, cwd=tmp_path)  # the next batch retries and records what it publishes
    assert result.returncode == 1 and "FAILED r2" in result.stderr, result.stderr
    assert len(read_history(tmp_path / "out", "r1")) == 1 and (tmp_path / "out" / "r1" / "report.html").is_file()
    assert read_status(tmp_path / "out", "r1")["status"] == "built"
    assert not glob.glob(str(tmp_path / "out" / ".*staging*"))
    assert ">interrupted</span>" not in (tmp_path / "out" / "index.html").read_text()


def test_a_batch_removes_only_what_it_made(tmp_path):
    config = small_config(tmp_path, run=str(tmp_path / "missing.txt"))
    out = tmp_path / "out"
    (out / ".history").mkdir(parents=True)
    foreign = [out / ".notes.tmp", out / ".history" / ".cmds.tmp", out / ".cache.staging-999999-abcdef12" / "mine.txt",
               out / ".index.html.notes.tmp"]
    for path in foreign:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("the user's")
    ours = out / ".r1.staging-999999-0123abcd"  # a dead process's staging, with the marker
    ours.mkdir()
    (ours / OWNED_MARKER).write_text("made by ndcg-report")
    our_temp = out / ".index.html.ndcg-999999.abcd1234.tmp"
    our_temp.write_text("half an index")
    result = cli("batch", config, cwd=tmp_path)  # r1's run is missing: it fails at once, after the clean-up
    assert result.returncode == 1 and "FAILED r1" in result.stderr, result.stderr
    assert all(path.read_text() == "the user's" for path in foreign)
    assert not ours.exists() and not our_temp.exists()
    (out / "index.html").write_text("<html>the user's own page</html>")
    one_line(cli("batch", config, cwd=tmp_path), 2, "index.html was not written by ndcg-report")
    assert (out / "index.html").read_text() == "<html>the user's own page</html>"


def test_the_batch_removes_only_attempt_markers_it_wrote(tmp_path):
    from ndcg_report.batch.dask_builds import _claim
    from ndcg_report.batch.leftovers import clean_stale_folders

    history = tmp_path / ".history"
    history.mkdir()
    notes = history / "notes.attempt.json"
    notes.write_text('{"my": "notes"}')
    ours = history / "r9.attempt.json"
    ours.write_text(json.dumps({"token": TOKEN, "worker": "worker tcp://127.0.0.1:1", "started": "2026-11-25T00:00:00Z"}))
    removed = clean_stale_folders(tmp_path)
    assert removed == [ours] and not ours.exists() and notes.read_text() == '{"my": "notes"}'
    mine = history / "r1.attempt.json"  # named like a report's marker, but not one
    mine.write_text("the user's")
    with pytest.raises(FileExistsError, match="not an attempt marker"):
        _claim(mine, TOKEN, "worker here")
    assert mine.read_text() == "the user's"


@as_root
def test_a_batch_root_leaves_another_users_staging_alone(tmp_path):
    from ndcg_report.batch.leftovers import clean_stale_folders

    planted = plant_staging(tmp_path, "nightly", NOBODY)
    mine = plant_staging(tmp_path, "weekly", os.geteuid())  # the same shape, of this user: a dead build's
    (tmp_path / "weekly").mkdir()
    (tmp_path / "nightly").mkdir()  # the report the planted folder claims to be for
    clean_stale_folders(tmp_path)
    assert planted.is_dir() and (planted / "index.html").is_file()
    assert list((tmp_path / "nightly").iterdir()) == []
    assert not mine.exists() and (tmp_path / "weekly" / "index.html").is_file()  # its entries handed back


def shared_root(tmp_path: Path, mode: int, owner: int) -> Path:
    """tmp_path/out, a folder every user may write to (mode), belonging to owner."""
    out = tmp_path / "out"
    out.mkdir()
    os.chown(out, owner, owner)
    out.chmod(mode)
    return out


@as_root
def test_an_output_root_of_another_user_is_refused_before_anything_is_built(tmp_path):
    config = small_config(tmp_path)
    out = shared_root(tmp_path, 0o1777, NOBODY)
    one_line(cli("batch", config, cwd=tmp_path), 2, f"output root {out} belongs to nobody, not to you")
    one_line(cli("batch", config, "--index", cwd=tmp_path), 2, "give an output root you own")
    assert list(out.iterdir()) == []


def test_an_output_root_others_may_write_without_the_sticky_bit_is_refused_before_anything_is_built(tmp_path):
    """There another user could move a report's staging folder or the history aside and put theirs in its place."""
    root = tmp_path / "out"
    root.mkdir()
    os.chmod(root, 0o777)
    result = cli("batch", small_config(tmp_path))
    one_line(result, 2, f"output root {root} is not safe: {root} (mode 0777, owner ")
    assert "so another user could swap its reports' folders or its history" in result.stderr
    assert list(root.iterdir()) == []


@as_root
def test_a_history_folder_of_another_user_is_refused_and_its_numbers_never_shown(tmp_path):
    config = small_config(tmp_path)
    out = shared_root(tmp_path, 0o1777, os.geteuid())
    forged = out / ".history" / "r1.jsonl"
    forged.parent.mkdir()
    forged.write_text(json.dumps({"time": "2026-11-25T00:00:00Z", "run_mean": 0.9999, "run_name": "a"}) + "\n")
    for path in (forged.parent, forged):
        os.chown(path, NOBODY, NOBODY)
    one_line(cli("batch", config, cwd=tmp_path), 2, f"{forged.parent} belongs to nobody, not to you")
    assert sorted(path.name for path in out.iterdir()) == [".history"]


@as_root
@pytest.mark.parametrize("name", ["r1.status.json", "r1.log", "r1.jsonl", "batch.json"])
def test_a_link_another_user_put_in_the_history_is_refused_and_its_target_kept(tmp_path, name):
    config = small_config(tmp_path)
    out = shared_root(tmp_path, 0o755, os.geteuid())
    (out / ".history").mkdir(mode=0o777)
    (out / ".history").chmod(0o777)
    target = tmp_path / "victim.txt"
    target.write_bytes(b"the victim's file\n")
    target.chmod(0o640)
    planted = out / ".history" / name
    planted.symlink_to(target)
    os.lchown(planted, NOBODY, NOBODY)
    one_line(cli("batch", config, cwd=tmp_path), 2, f"{planted} belongs to nobody, not to you")
    assert target.read_bytes() == b"the victim's file\n" and target.stat().st_mode & 0o777 == 0o640
    assert planted.is_symlink() and not (out / "index.html").exists()


@as_root
def test_another_users_temporary_files_are_left_alone(tmp_path):
    from ndcg_report.batch.leftovers import clean_stale_folders

    config = small_config(tmp_path)
    out = shared_root(tmp_path, 0o1777, os.geteuid())
    (out / ".history").mkdir()
    theirs = [out / ".index.html.ndcg-99999.abcd1234.tmp", out / ".history" / ".r1.log.ndcg-99999.abcd1234.tmp"]
    for path in theirs:
        path.write_text("another user's")
        os.chown(path, NOBODY, NOBODY)
    mine = out / ".index.html.ndcg-99998.abcd1234.tmp"
    mine.write_text("half an index")
    assert clean_stale_folders(out) == [mine]
    result = cli("batch", config, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert all(path.read_text() == "another user's" for path in theirs)
    assert (out / "r1" / "report.html").is_file()
