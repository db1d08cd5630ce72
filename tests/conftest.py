"""Shared fixtures: the TREC DL 2019 passage data shipped inside the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


@pytest.fixture(scope="session")
def dl19() -> dict[str, Path]:
    folder = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
    return {
        "qrels": folder / "qrels.dl19-passage.txt",
        "bm25": folder / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz",
        "monot5": folder / "monot5.dl19.run.gz",
        "topics": folder / "topics.dl19-passage.txt",
        "bm25_eval": TESTS / "data" / "run.msmarco-v1-passage.bm25-default.dl19.eval",
    }
