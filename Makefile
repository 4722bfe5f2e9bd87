# One place for the commands the README and CI use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: install install-test chromium serve test check lint typecheck bench bench-gateway

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

# The browser test drives Debian's Chromium (never a downloaded browser build).
chromium:
	@test -x /usr/bin/chromium || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
		else echo "install Debian's chromium (sudo apt-get install chromium) for the browser test"; exit 1; fi; }

test: install-test chromium lint typecheck
	$(BIN)/pytest

bench: install
	$(BIN)/python bench/context_latency.py

bench-gateway: install
	$(BIN)/python bench/gateway_latency.py
