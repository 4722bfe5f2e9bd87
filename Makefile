# One place for the commands the README and CI use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: install install-test serve test check lint typecheck bench bench-gateway

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

serve: install
	$(BIN)/tenure serve

lint: install-test
	$(BIN)/ruff format --check beliefs proxy extractor compaction tests bench
	$(BIN)/ruff check beliefs proxy extractor compaction tests bench

typecheck: install-test
	$(BIN)/mypy

test: install-test lint typecheck
	$(BIN)/pytest

bench: install
	$(BIN)/python bench/context_latency.py

bench-gateway: install
	$(BIN)/python bench/gateway_latency.py
