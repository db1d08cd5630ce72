"""A batch config (batch/config.py, batch/config_yaml.py): YAML that would expand or nest without bound,
repeated keys and control characters refused at load with one line; merge keys work."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ndcg_report import ParameterError
from ndcg_report.batch.config import load_config
from ndcg_report.batch.reports import build_argv
from tests.helpers import cli, one_line


def test_yaml_aliases_that_expand_past_a_bound_are_refused_quickly(tmp_path):
    text = "output: out\nx0: &l0 [1,1,1,1,1,1,1,1,1]\n"
    for i in range(1, 10):
        text += f"x{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]\n"
    text += "defaults:\n  k: *l9\nreports: [{name: a, run: r, baseline: b, qrels: q}]\n"
    (tmp_path / "laughs.yml").write_text(text)
    result = cli("batch", tmp_path / "laughs.yml")
    one_line(result, 2, "the document expands to more than 100,000 values")
    assert len(result.stderr) < 1000


def test_every_config_message_is_capped(tmp_path):
    (tmp_path / "c.yml").write_text("output: out\nreports:\n  - {name: a, run: r, baseline: b, qrels: q, gain: "
                                    + "x" * 100_000 + "}\n")
    result = cli("batch", tmp_path / "c.yml")
    one_line(result, 2, "key 'gain'")
    assert len(result.stderr) < 1000


@pytest.mark.parametrize("field", ["run", "title"])
def test_a_nul_in_a_config_value_is_refused_at_load(tmp_path, field):
    report = {"name": "a", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt"}
    report[field] = "x\x00y"
    (tmp_path / "c.yml").write_text(yaml.safe_dump({"output": "out", "reports": [report]}))
    with pytest.raises(ParameterError, match=f"key '{field}'.*(NUL|control character)"):
        load_config(tmp_path / "c.yml")


def test_yaml_merge_keys_work(tmp_path):
    (tmp_path / "c.yml").write_text("output: out\ndefaults: &d {gain: exponential, k: [10]}\n"
                                    "reports:\n  - {<<: *d, name: a, run: r.txt, baseline: b.txt, qrels: q.txt, k: [5]}\n")
    options = load_config(tmp_path / "c.yml").reports[0].options
    assert (options.gain, options.cutoffs) == ("exponential", "5")  # merged, and the report's own key wins


def test_a_config_nested_600_deep_is_one_line(tmp_path):
    from ndcg_report.batch.config import load_config

    (tmp_path / "c.yml").write_text("output: out\nreports: " + "[" * 600 + "]" * 600 + "\n")
    with pytest.raises(ParameterError, match="nested more than 50 deep"):
        load_config(tmp_path / "c.yml")


@pytest.mark.parametrize(("field", "value"), [("output", "ro\x01ot"), ("cache_dir", "c\x1b[31m"), ("run", "r\nun.txt"),
                                              ("title", "T\x85itle"), ("run_name", "a\x9bb")])
def test_control_characters_in_a_config_are_refused_at_load(tmp_path, field, value):
    from ndcg_report.batch.config import load_config

    report = {"name": "a", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt"}
    config = {"output": "out", "reports": [report]}
    (config if field in ("output", "cache_dir") else report)[field] = value
    (tmp_path / "c.yml").write_text(yaml.safe_dump(config))
    with pytest.raises(ParameterError, match=rf"'{field}'.*control character \(U\+00"):
        load_config(tmp_path / "c.yml")


@pytest.mark.parametrize("text", ["  - {<<: {gain: linear, gain: exponential}, name: a, run: r, baseline: b, qrels: q}\n",
                                  "  - {<<: {gain: linear}, <<: {k: 5}, name: a, run: r, baseline: b, qrels: q}\n"])
def test_repeated_keys_in_merged_mappings_and_two_merge_keys_are_refused(tmp_path, text):
    from ndcg_report.batch.config import load_config

    (tmp_path / "c.yml").write_text("output: out\nreports:\n" + text)
    with pytest.raises(ParameterError, match="appears twice in one mapping|two merge keys"):
        load_config(tmp_path / "c.yml")


DL19 = Path(__file__).resolve().parents[2] / "src" / "ndcg_report" / "data" / "dl19-passage"


def test_a_batch_takes_several_baselines_as_a_mapping_the_first_the_headline_s(tmp_path):
    bm25, top20 = DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz", DL19 / "monot5-top20-bm25.dl19.run.gz"
    report = {"name": "nightly", "runs": [{"name": "monoT5", "path": str(DL19 / "monot5.dl19.run.gz")}],
              "qrels": str(DL19 / "qrels.dl19-passage.txt"), "baseline": {"BM25": str(bm25), "top20": str(top20)}}
    config = {"output": str(tmp_path / "site"), "reports": [report]}
    (tmp_path / "batch.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    argv = build_argv(load_config(tmp_path / "batch.yml").reports[0], tmp_path / "out", None)
    assert argv.index(f"--baseline=BM25={bm25}") + 1 == argv.index(f"--baseline=top20={top20}")
    assert not [word for word in argv if word.startswith("--baseline-name")]
    report["baseline"] = {"BM25": str(bm25), "monoT5": str(top20)}
    (tmp_path / "batch.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    with pytest.raises(ParameterError, match="baseline 'monoT5': 'monoT5' is also a run's name"):
        load_config(tmp_path / "batch.yml")
