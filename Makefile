# Bootstraps .venv from a machine that has only Python 3.11; every install step lives here.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: report test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

report: $(STAMP)
	$(BIN)/ndcg-report demo --out reports/demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/run_benchmark.py
	$(BIN)/python benchmarks/stage_times.py
	$(BIN)/python benchmarks/scale_benchmark.py

clean:
	rm -rf $(VENV) reports/demo reports/demo-cranfield reports/demo-rag reports/nightly build src/*.egg-info .pytest_cache .hypothesis benchmarks/data-scale
