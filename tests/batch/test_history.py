"""A report's history (batch/history.py): a line of the wrong shape is skipped and named."""

from __future__ import annotations

import os


def test_a_history_line_of_the_wrong_shape_is_skipped_and_named(tmp_path):
    from ndcg_report.batch.history import append_history, history_file, read_history
    from ndcg_report.batch.index_page import ReportState, write_index

    append_history(tmp_path, "r1", {"time": "2026-11-25T00:00:00Z", "run_mean": 0.5, "run_name": "a", "k": "10"})
    with open(history_file(tmp_path, "r1"), "a") as stream:
        stream.write('{"systems":"x"}\n{"time": "2026-11-26T00:00:00Z", "run_mean": "high"}\n')
    append_history(tmp_path, "r1", {"time": "2026-11-27T00:00:00Z", "run_mean": 0.6, "run_name": "a", "k": "10"})
    history = read_history(tmp_path, "r1")
    write_index(tmp_path, [ReportState(name="r1", title="r1", status="built", history=tuple(history))],
                heading="h", batch_line="b")
    assert "0.6000" in (tmp_path / "index.html").read_text()
    assert [record["run_mean"] for record in history] == [0.5, 0.6]
    from ndcg_report.batch.history import history_problems

    assert history_problems(tmp_path, "r1") == ["line 2: 'time' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)",
                                                "line 3: 'run_mean' is not a number"]


def test_a_status_or_log_file_that_is_a_link_is_replaced_and_its_target_left_as_it_was(tmp_path):
    from ndcg_report.batch.history import log_file, read_status, status_file, write_log, write_status

    secrets = []
    for where in (status_file, log_file):
        secret = tmp_path / f"secret-{where.__name__}"
        secret.write_bytes(b"the user's own words\n")
        secret.chmod(0o600)
        where(tmp_path, "r1").parent.mkdir(exist_ok=True)
        where(tmp_path, "r1").symlink_to(secret)
        secrets.append(secret)
    write_status(tmp_path, "r1", {"status": "built"})
    write_log(tmp_path, "r1", "$ ndcg-report build\n")
    for secret in secrets:
        assert secret.read_bytes() == b"the user's own words\n" and secret.stat().st_mode & 0o777 == 0o600
    assert not status_file(tmp_path, "r1").is_symlink() and read_status(tmp_path, "r1") == {"status": "built"}
    assert not log_file(tmp_path, "r1").is_symlink() and log_file(tmp_path, "r1").read_text() == "$ ndcg-report build\n"


def test_a_history_file_that_is_a_link_is_neither_read_nor_appended_to(tmp_path):
    import pytest

    from ndcg_report.batch.history import append_history, history_file, read_history

    forged = tmp_path / "forged.jsonl"
    forged.write_text('{"time": "2026-11-25T00:00:00Z", "run_mean": 0.9999}\n')
    history_file(tmp_path, "r1").parent.mkdir()
    history_file(tmp_path, "r1").symlink_to(forged)
    with pytest.raises(OSError):
        read_history(tmp_path, "r1")
    with pytest.raises(OSError):
        append_history(tmp_path, "r1", {"time": "2026-11-26T00:00:00Z", "run_mean": 0.5})
    assert forged.read_text() == '{"time": "2026-11-25T00:00:00Z", "run_mean": 0.9999}\n'


def test_hand_edited_history_numbers_and_times_no_report_writes_are_skipped_and_named_by_index(tmp_path, capsys):
    """A 1e308 mean (the index printed its 309 digits) and a time of 99:99 (the index showed it) are not a
    report's: skipped, and `batch --index` names them on stderr as the batch's log does."""
    import yaml

    from ndcg_report.batch.history import append_history, history_file, history_problems
    from ndcg_report.batch.runner import main

    out = tmp_path / "out"
    out.mkdir()
    append_history(out, "r1", {"time": "2026-11-25T00:00:00Z", "run_mean": 0.5, "run_name": "a", "k": "10"})
    with open(history_file(out, "r1"), "a") as stream:
        stream.write('{"time": "2026-11-26T00:00:00Z", "run_mean": 1e308}\n'
                     '{"time": "2026-11-27T99:99:00Z", "run_mean": 0.7}\n'
                     '{"time": "2026-11-28T00:00:00Z", "run_mean": 0.5, "systems": [{"name": "a", "delta": -1e300}]}\n')
    assert history_problems(out, "r1") == ["line 2: 'run_mean' is not a number",
                                           "line 3: 'time' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)",
                                           "line 4: system 'a' has a value that is not a number"]
    config = tmp_path / "nightly.yml"
    config.write_text(yaml.safe_dump({"output": "out", "reports": [
        {"name": "r1", "run": "a.txt", "qrels": "q.txt", "baseline": "b.txt"}]}))
    assert main(str(config), index_only=True) == 0
    err = capsys.readouterr().err
    assert err.count("ndcg-report: note: history of r1: skipped line") == 3 and "line 3: 'time'" in err
    page = (out / "index.html").read_text()
    assert "99:99" not in page and "0" * 30 not in page


def test_a_history_line_of_64_mib_is_read_in_bounded_memory_skipped_and_named(tmp_path):
    from ndcg_report.batch.history import append_history, history_file, history_problems, read_history
    from tests.inputs.test_reading_limits import peak_python_memory

    append_history(tmp_path, "r1", {"time": "2026-11-25T00:00:00Z", "run_mean": 0.5})
    with open(history_file(tmp_path, "r1"), "r+b") as stream:  # a line of 64 MiB, written sparsely
        start = stream.seek(0, os.SEEK_END)
        stream.seek(start + (64 << 20))
        stream.write(b"\n")
    append_history(tmp_path, "r1", {"time": "2026-11-27T00:00:00Z", "run_mean": 0.6})
    found = []
    raised, peak = peak_python_memory(lambda: found.extend(read_history(tmp_path, "r1")))
    assert raised is None and [record["run_mean"] for record in found] == [0.5, 0.6]
    assert peak < 8 << 20
    assert history_problems(tmp_path, "r1") == ["line 2: longer than 1 MiB (a build writes lines of a few KB)"]
