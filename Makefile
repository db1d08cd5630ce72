# Bootstraps .venv from a machine that has only Python 3.11; every install step lives here.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: report test docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

report: $(STAMP)
	$(BIN)/ndcg-report demo --out reports/demo

# The suite on a worker per core (at most 4), a test file to a worker: a file's report builds (module fixtures)
# are made once, and one build's serial steps overlap another file's (8.7 min on 2 cores, against 12.3 in one)
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadfile

# The documentation site into site/ (open site/index.html: nothing is fetched from the network)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/run_benchmark.py
	$(BIN)/python benchmarks/eval_stages.py --peers floor,pytrec_eval
	$(BIN)/python benchmarks/scale_benchmark.py

clean:
	rm -rf $(VENV) reports/demo reports/demo-cranfield reports/demo-rag reports/nightly build site src/*.egg-info .pytest_cache .hypothesis benchmarks/data-scale benchmarks/data-eval
