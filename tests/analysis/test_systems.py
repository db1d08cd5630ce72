"""The systems of a report (analysis/systems.py): a run unnamed is named by its file name, a clash is
refused, and a build's --name and a batch's title share one check."""

from __future__ import annotations

import json

import pytest

from ndcg_report.errors import ParameterError
from tests.helpers import BASELINE, BUILD, QRELS, RUN, cli, installed, one_line, refused


def test_an_unnamed_run_is_named_by_its_file_name_and_a_clash_is_refused(tmp_path):
    from ndcg_report.analysis.compare import compare_runs

    dl_hard = tmp_path / "bm25+rm3+bert(zs).run"
    dl_hard.write_text(RUN.read_text().replace("pyterrier", "T5-P"))
    t5 = tmp_path / "t5.txt.gz"
    import gzip

    t5.write_bytes(gzip.compress(RUN.read_text().replace("pyterrier", "T5-P").encode()))
    experiment = compare_runs([dl_hard, t5], QRELS, BASELINE, cutoffs="10", n_resamples=50)
    assert experiment.names == ("bm25+rm3+bert(zs)", "t5") and experiment.baseline_name == "bm25"
    from ndcg_report.analysis.systems import stem_name

    for name in ("splade.json", "splade.jsonl", "splade.ndjson", "splade.jsonl.gz", "splade.JSONL", "splade.run"):
        assert stem_name(tmp_path / name) == "splade", name  # JSON and JSON lines as TREC text and Parquet
    lines = tmp_path / "colbert.jsonl"
    lines.write_text("".join(f'{{"qid": "{q}", "docid": "{d}", "score": {s}}}\n'
                             for q, _, d, _, s, _ in (line.split() for line in RUN.read_text().splitlines())))
    assert compare_runs([lines], QRELS, BASELINE, cutoffs="10", n_resamples=50).names == ("colbert",)
    twin = tmp_path / "bm25.run"
    twin.write_text(RUN.read_text())
    with pytest.raises(ParameterError, match="named 'bm25' .from its file name. like the baseline"):
        compare_runs([twin], QRELS, BASELINE, cutoffs="10", n_resamples=50)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "t5.run").write_text(RUN.read_text())
    one_line(cli("build", "--run", tmp_path / "a" / "t5.run", "--run", t5, "--baseline", BASELINE, "--qrels", QRELS,
                 "--out", tmp_path / "out"), 2, "runs 1 and 2 would both be named 't5'")
    one_line(cli("build", "--run", twin, "--baseline", BASELINE, "--qrels", QRELS, "--out", tmp_path / "out"), 2,
             "like the baseline")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("character", ["\x1b", "\x85"])
def test_build_name_and_a_batch_title_share_one_check(tmp_path, character):
    from ndcg_report.batch.config import load_config

    title = f"a{character}b"
    err = refused(installed(*BUILD, "--name", title, "--out", tmp_path / "out"),
                  f"the title {title!r} holds a control character (U+{ord(character):04X})")
    assert not (tmp_path / "out").exists()
    (tmp_path / "c.yml").write_text(json.dumps({"output": "site", "reports": [
        {"name": "a", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt", "title": title}]}))
    with pytest.raises(ParameterError) as caught:
        load_config(tmp_path / "c.yml")
    batch = str(caught.value)
    assert batch[batch.rindex("the title "):] in err
