# Two commands: `make demo` and `make test`. Both create .venv and install into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test install dev lint typecheck pytest chromium bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev

# The seed's coupon card, three runs replayed from the bundled cassette, stored in ./passhat.db.
demo: install
	$(BIN)/passhat run examples/clarify --case ac-conflict-001

lint: dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: dev
	$(BIN)/mypy

pytest: dev chromium
	$(BIN)/pytest

# Debian's Chromium (and a CJK font for the zh-TW screenshots): the HTML report is
# tested in a real headless browser. Installed when missing; CI runs as root.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      chromium fonts-wqy-zenhei >/dev/null; \
	  else \
	    echo "Chromium is missing: sudo apt-get install chromium (or PASSHAT_SKIP_BROWSER=1)"; \
	    exit 1; \
	  fi; }

test: lint typecheck pytest

bench: install
	$(BIN)/python benchmarks/bench_metrics.py
	$(BIN)/python benchmarks/bench_runner.py
	$(BIN)/python benchmarks/bench_stats.py
	$(BIN)/python benchmarks/bench_html.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
