"""Where a report goes (build/publish.py): --out checked before the build and again at the swap; a report
replaces only what the tool wrote, keeps what a user added, and leaves another user's staging alone."""

from __future__ import annotations

import glob
import json
import os
import subprocess
from pathlib import Path

import pytest

from ndcg_report.errors import ParameterError
from ndcg_report.working_folders import OWNED_MARKER
from tests.helpers import (NOBODY, SMALL, InProcessBuilds, as_root, build_args, build_from, build_in_process, cli,
                           fake_summary, one_line, plant_staging, small_config)


def test_build_never_replaces_an_input_or_a_folder_it_did_not_make(tmp_path):
    out = tmp_path / "OUT"
    out.mkdir()
    topics = out / "summary.json"
    topics.write_text((SMALL / "topics.txt").read_text())
    args = ["build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt"]
    one_line(cli(*args, "--topics", topics, "--out", out), 2, f"holds the input {topics}")
    assert topics.read_text() == (SMALL / "topics.txt").read_text()
    other = tmp_path / "OUT2"
    (other / "report.html").mkdir(parents=True)
    (other / "report.html" / "mine.txt").write_text("keep")
    one_line(cli(*args, "--out", other), 2, "report.html is a folder or a link, not a report's file")
    assert (other / "report.html" / "mine.txt").read_text() == "keep"


@pytest.mark.parametrize("out", ["/proc/x", "FILE/x"])
def test_an_out_that_cannot_be_made_is_one_line(tmp_path, out):
    (tmp_path / "FILE").write_text("x")
    out = out.replace("FILE", str(tmp_path / "FILE"))
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels",
                 SMALL / "qrels.txt", "--out", out)
    one_line(result, 2, f"--out {out}")


def test_files_added_to_out_during_a_build_are_kept(tmp_path, fake_steps):
    out = tmp_path / "out"
    build_in_process(out)  # an earlier report
    fake_steps.append(lambda: (out / "notes.txt").write_text("mine"))
    fake_steps.append(lambda: (out / "mydir").mkdir())
    fake_steps.append(lambda: (out / "mydir" / "f.txt").write_text("mine too"))
    result = build_in_process(out)
    assert (out / "notes.txt").read_text() == "mine" and (out / "mydir" / "f.txt").read_text() == "mine too"
    assert json.loads((out / "summary.json").read_text())["comparisons"]["monot5"]["nDCG@10"]["run_mean"] == 0.52
    assert sorted(p.name for p in out.iterdir()) == ["mydir", "notes.txt", "per_query.csv", "report.html",
                                                     "report.ipynb", "summary.json", "unjudged.tsv"]
    assert any("kept mydir, notes.txt" in note for note in result.notes)
    assert not list(tmp_path.glob(".out.*"))
    fake_steps.clear()
    build_in_process(out)  # an earlier report with the user's files in it is still an earlier report: kept again
    assert (out / "notes.txt").read_text() == "mine" and (out / "mydir" / "f.txt").read_text() == "mine too"


def test_a_batch_keeps_a_file_added_to_its_report_folder_mid_build(tmp_path, fake_steps):
    from ndcg_report.batch.config import load_config
    from ndcg_report.batch.history import read_history, read_status
    from ndcg_report.batch.runner import run_batch

    config = load_config(small_config(tmp_path))
    assert run_batch(config, builds=InProcessBuilds(), log=lambda line: None).exit_code == 0
    notes = tmp_path / "out" / "r1" / "NOTES.txt"
    fake_steps.append(lambda: notes.write_text("the user's"))
    assert run_batch(config, force=True, builds=InProcessBuilds(), log=lambda line: None).exit_code == 0
    assert notes.read_text() == "the user's" and (tmp_path / "out" / "r1" / "report.html").is_file()
    assert read_status(tmp_path / "out", "r1")["status"] == "built" and len(read_history(tmp_path / "out", "r1")) == 1
    assert json.loads((tmp_path / "out" / "r1" / "summary.json").read_text())["comparisons"]["monot5"]["nDCG@10"][
        "run_mean"] == 0.52


def test_an_old_report_left_mid_swap_loses_only_its_own_files(tmp_path, fake_steps):
    out = tmp_path / "out"
    build_in_process(out)
    left = tmp_path / ".out.staging-999999-0123abcd"  # a build killed between the swap and the tidy-up
    left.mkdir()
    (left / "report.html").write_text("old report")
    (left / "notes.txt").write_text("the user's")
    (left / OWNED_MARKER).write_text("made by ndcg-report, process 999999\nowns only: report.html\n")
    build_in_process(out)  # its clean-up of stale folders
    assert not left.exists() and (out / "notes.txt").read_text() == "the user's"


def test_an_out_that_stopped_being_a_report_folder_is_not_replaced_at_the_swap(tmp_path, fake_steps):
    out = tmp_path / "out"
    fake_steps.append(lambda: out.mkdir())
    fake_steps.append(lambda: (out / "summary.json").write_text("the user's"))
    with pytest.raises(ParameterError, match="nothing is published: --out .* changed during the build and now is not"):
        build_in_process(out)
    assert (out / "summary.json").read_text() == "the user's" and sorted(os.listdir(out)) == ["summary.json"]
    assert not list(tmp_path.glob(".out.*"))


def test_a_folder_is_an_earlier_report_only_with_the_tools_mark(tmp_path):
    user = tmp_path / "U"
    user.mkdir()
    (user / "summary.json").write_text('{"my": "numbers"}')
    one_line(cli(*build_args(user)), 2, "is not an earlier report's folder (its summary.json was not written by "
                                        "ndcg-report")
    assert (user / "summary.json").read_text() == '{"my": "numbers"}' and os.listdir(user) == ["summary.json"]
    from ndcg_report.build.publish import is_earlier_report

    (user / "summary.json").write_text(json.dumps({"schema_version": 2, "ndcg_report_version": "0.1.0"}))
    assert is_earlier_report(user)
    for foreign in ("[1, 2]", '{"schema_version": "2", "ndcg_report_version": "0.1.0"}', "{"):
        (user / "summary.json").write_text(foreign)
        assert not is_earlier_report(user), foreign


def test_a_report_folder_the_build_cannot_empty_is_refused_before_building(tmp_path, monkeypatch):
    from ndcg_report.build import pipeline as build

    out = tmp_path / "r1"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps(fake_summary(0.5)))
    real_access = os.access  # root may write anywhere: the folder of another user, simulated
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == out else real_access(path, mode))
    with pytest.raises(ParameterError, match=r"r1 is not writable.*the old report's files in it could not be removed"):
        build.check_out_dir(out)


def test_once_published_a_build_succeeds_even_if_the_old_report_cannot_be_removed(tmp_path, fake_steps, monkeypatch):
    from ndcg_report.batch.config import load_config
    from ndcg_report.batch.history import read_history, read_status
    from ndcg_report.batch.runner import run_batch

    config = load_config(small_config(tmp_path))
    assert run_batch(config, builds=InProcessBuilds(), log=lambda line: None).exit_code == 0
    from ndcg_report.build import publish

    def denied(folder, only=None):  # the old report's folder belongs to another user: nothing is written in it
        raise PermissionError(13, "Permission denied", str(folder / OWNED_MARKER))

    monkeypatch.setattr(publish, "mark_owned", denied)
    lines = []
    config = load_config(small_config(tmp_path, k="10"))  # other options: a new history point
    result = run_batch(config, builds=InProcessBuilds(), log=lines.append)
    assert result.exit_code == 0 and not any("FAILED" in line for line in lines), lines
    assert read_status(tmp_path / "out", "r1")["status"] == "built" and len(read_history(tmp_path / "out", "r1")) == 2
    summary = json.loads((tmp_path / "out" / "r1" / "summary.json").read_text())
    assert summary["comparisons"]["monot5"]["nDCG@10"]["run_mean"] == 0.52  # the new report is the published one
    (left,) = glob.glob(str(tmp_path / "out" / ".r1.staging-*"))  # the old one, named in a note, untouched
    assert sorted(os.listdir(left)) == ["per_query.csv", "report.html", "report.ipynb", "summary.json", "unjudged.tsv"]


def test_an_out_that_is_a_mount_point_is_refused_before_building(tmp_path, monkeypatch):
    from ndcg_report.build import pipeline as build

    mount = tmp_path / "mnt"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True,
                             check=False).returncode == 0 if os.geteuid() == 0 else False
    if not mounted:  # the sandbox forbids mounting: the same check, the mount point simulated
        real_ismount = os.path.ismount
        monkeypatch.setattr(os.path, "ismount", lambda path: Path(path) == mount or real_ismount(path))
    try:
        with pytest.raises(ParameterError, match="is a mount point: a report is published by renaming its folder"):
            build.check_out_dir(mount)
        if mounted:
            one_line(cli(*build_args(mount)), 2, "is a mount point")
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False)


@as_root
def test_a_staging_folder_planted_by_another_user_is_left_alone(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # as /tmp
    assert build_from(tmp_path, shared / "report").returncode == 0  # a report to be rebuilt there
    planted = plant_staging(shared, "report", NOBODY)
    result = build_from(tmp_path, shared / "report")
    assert result.returncode == 0, result.stderr
    assert "kept" not in result.stdout + result.stderr
    report = shared / "report"
    assert not {"index.html", "assets", "passwd.txt"} & {path.name for path in report.iterdir()}
    assert sorted(path.name for path in planted.iterdir()) == [".ndcg-report-owned", "assets", "index.html", "passwd.txt"]
    assert all(os.lstat(path).st_uid == os.geteuid() for path in (report, *report.iterdir()))


def test_a_staging_folder_is_private_until_published(tmp_path):
    from ndcg_report.working_folders import new_owned_folder, open_up

    old = os.umask(0o022)
    try:
        staging = new_owned_folder(tmp_path, ".report.staging")
        assert staging.stat().st_mode & 0o7777 == 0o700
        os.chmod(staging, 0o1777)  # whatever it had, publishing gives the umask's mode
        open_up(staging)
        assert staging.stat().st_mode & 0o7777 == 0o755
    finally:
        os.umask(old)
    result = build_from(tmp_path, tmp_path / "published")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "published").stat().st_mode & 0o7777 == 0o777 & ~old


def test_a_rebuild_keeps_the_user_s_own_files_in_figures_and_inputs_and_says_so(tmp_path):
    """The previous report's summary.json lists the figures it made (and inputs/ the files of its table of
    inputs): only those are replaced; a user's own SVG, notes and inputs/ file are carried over and named."""
    out = tmp_path / "out"
    args = ["build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
            "-k", "10", "--out", out]
    assert cli(*args).returncode == 0
    made = sorted(path.name for path in (out / "figures").iterdir())
    (out / "figures" / "my-figure.svg").write_text("<svg>mine</svg>")
    (out / "figures" / "notes.txt").write_text("mine")
    (out / "figures" / made[0]).write_text("<svg>the old report's, replaced</svg>")
    (out / "inputs").mkdir()
    (out / "inputs" / "run-1.parquet").write_text("not a report's: its table of inputs has no such file")
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert (out / "figures" / "my-figure.svg").read_text() == "<svg>mine</svg>"
    assert (out / "figures" / "notes.txt").read_text() == "mine"
    assert (out / "inputs" / "run-1.parquet").read_text().startswith("not a report's")
    assert (out / "figures" / made[0]).read_text().startswith("<?xml")  # the new report's own
    assert sorted(path.name for path in (out / "figures").iterdir()) == sorted([*made, "my-figure.svg", "notes.txt"])
    assert "figures/my-figure.svg" in result.stderr and "inputs/run-1.parquet" in result.stderr


def test_an_out_of_another_user_is_refused_before_the_build(tmp_path):
    """In a sticky folder (/tmp) another user's empty folder at --out cannot be replaced: the build used to run
    whole and fail at publish; an --out of another user is refused at the start, whatever its parent."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to make a folder of another user")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    out = shared / "out"
    out.mkdir()
    os.chown(out, 65534, 65534)
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                 "--out", out)
    one_line(result, 2, f"--out {out}: belongs to nobody, not to you")
    assert list(out.iterdir()) == [] and sorted(path.name for path in shared.iterdir()) == ["out"]


@pytest.mark.parametrize("shared", ["parent", "grandparent"])
def test_an_out_in_a_folder_others_may_write_without_the_sticky_bit_is_refused_before_the_build(tmp_path, shared):
    """There another user could move the staging folder aside and put one of theirs in its place (a link named
    as the tool's marker, a figure with a script): refused before anything is made, as a shared TMPDIR is."""
    grandparent = tmp_path / "team"
    parent = grandparent / "reports"
    parent.mkdir(parents=True)
    os.chmod(grandparent if shared == "grandparent" else parent, 0o777)
    out = parent / "out"
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                 "--out", out)
    unsafe = grandparent if shared == "grandparent" else parent
    one_line(result, 2, f"--out {out} is not safe: {unsafe} (mode 0777, owner ")
    assert "is writable by other users without the sticky bit, so another user could swap" in result.stderr
    assert list(parent.iterdir()) == []


@as_root
def test_an_out_in_a_folder_of_another_user_is_refused_before_the_build(tmp_path):
    parent = tmp_path / "theirs"
    parent.mkdir()
    os.chown(parent, NOBODY, NOBODY)  # they may rename anything in it, whatever its mode
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                 "--out", parent / "out")
    one_line(result, 2, f"--out {parent / 'out'} is not safe: {parent} belongs to nobody (mode 0755), not to you")
    assert list(parent.iterdir()) == []


def test_an_out_others_may_write_is_refused_before_the_build(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o777)
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                 "--out", out)
    one_line(result, 2, f"--out {out} is writable by other users, who could put their files in the report")
    assert list(out.iterdir()) == []


def test_a_staging_folder_moved_aside_and_replaced_mid_build_is_not_published(tmp_path, fake_steps):
    """What another user did in a shared folder, done here by the test: the build's staging folder moved aside
    mid-build and a folder put in its place holding a link named as the tool's marker (to the user's own file)
    and a figure with a script. Nothing is published, nothing is written through the link, their folder is
    left as it is."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's own file")
    os.chmod(secret, 0o600)
    swapped = {}

    def swap() -> None:
        (staging,) = tmp_path.glob(".out.staging-*")
        staging.rename(tmp_path / "moved-aside")
        staging.mkdir()
        (staging / OWNED_MARKER).symlink_to(secret)
        (staging / "figures").mkdir()
        (staging / "figures" / "zz.svg").write_text("<svg><script>alert(1)</script></svg>")
        swapped["folder"] = staging

    fake_steps.append(swap)
    with pytest.raises(ParameterError, match="nothing is published: the staging folder .* was moved or replaced"):
        build_in_process(tmp_path / "out")
    assert secret.read_text() == "the user's own file" and secret.stat().st_mode & 0o777 == 0o600
    assert not (tmp_path / "out").exists()
    assert (swapped["folder"] / "figures" / "zz.svg").read_text().startswith("<svg><script>")


def test_a_file_the_build_did_not_make_is_not_published(tmp_path, fake_steps):
    """A report publishes only the files the build made, by name: a figure no summary.json lists is refused."""
    def plant() -> None:
        (staging,) = tmp_path.glob(".out.staging-*")
        (staging / "figures").mkdir()
        (staging / "figures" / "zz.svg").write_text("<svg><script>alert(1)</script></svg>")

    fake_steps.append(plant)
    with pytest.raises(ParameterError, match=r"holds figures/zz\.svg, which the build did not make"):
        build_in_process(tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.*"))


def test_a_users_file_named_as_a_report_file_the_report_did_not_write_is_kept(tmp_path):
    """gate.json and queries.json are a report's only when its summary.json says it was given --against and
    --topics: a user's own (`gate OLD out --json out/gate.json`) is carried over and named, never removed."""
    out = tmp_path / "out"
    args = ["build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
            "-k", "10", "--out", out]
    assert cli(*args).returncode == 0
    (out / "gate.json").write_text('{"mine": true}')
    (out / "queries.json").write_text('{"q": "mine"}')
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert (out / "gate.json").read_text() == '{"mine": true}' and (out / "queries.json").read_text() == '{"q": "mine"}'
    assert "kept gate.json, queries.json in" in result.stderr
