"""A report's history (batch/history.py): a line of the wrong shape is skipped and named."""

from __future__ import annotations


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

    assert history_problems(tmp_path, "r1") == ["line 2: 'time' is not text", "line 3: 'run_mean' is not a number"]
