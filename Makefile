# Two commands: `make demo` and `make test`. Both create .venv and install into it.
# `make install-openai` / `make install-anthropic` add a model SDK to .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test install dev install-openai install-anthropic install-all lint typecheck pytest debs chromium bubblewrap clarify-ts bench bench-inspect clean test-litellm chaos

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

# The model SDKs are optional extras: install the one your --model needs.
install-openai: install
	$(BIN)/python -m pip install -q -e '.[openai]'
install-anthropic: install
	$(BIN)/python -m pip install -q -e '.[anthropic]'
install-all: install
	$(BIN)/python -m pip install -q -e '.[all]'

# The seed's coupon card, three runs replayed from the bundled cassette, stored in ./passhat.db.
demo: install
	$(BIN)/passhat run examples/clarify --case ac-conflict-001

lint: dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: dev
	$(BIN)/mypy

# One worker per core and one more (pytest-xdist), a test file per worker at a time: the
# files' session fixtures (the calibration cells) are built once. Many tests wait (on
# subprocesses, sandboxes, Chromium, deadlines): two workers on two cores left each about
# a third idle. Quiet 2-core machine, fresh clones, pytest's time: 2 workers 301 and 311 s,
# 3 workers 266 and 268 s (CPU +1 %), 4 workers 261 s (CPU +5 %). `make test WORKERS=2`
# sets it. `pytest tests/x.py` alone stays serial. The slowest tests are listed at the
# end. Bytecode first, as for bench: under PYTHONDONTWRITEBYTECODE every passhat the
# tests start (and every agent importing tests/ helpers) would compile its modules from
# source again.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
pytest: dev chromium bubblewrap clarify-ts
	$(BIN)/python -m compileall -q src tests
	$(BIN)/pytest -n $(WORKERS) --dist loadfile --durations=10

# The TypeScript command agent of examples/clarify-ts (official openai and MCP SDKs),
# run end to end by the tests: npm ci from its lockfile, then tsc.
CLARIFY_TS := examples/clarify-ts
clarify-ts: $(CLARIFY_TS)/dist/agent.js

$(CLARIFY_TS)/dist/agent.js: $(CLARIFY_TS)/package-lock.json $(CLARIFY_TS)/src/agent.ts $(CLARIFY_TS)/tsconfig.json
	cd $(CLARIFY_TS) && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build
	@touch $@

# Debian's packages the tests use, installed when missing (CI runs as root), all in one
# apt-get so that `make test` can fetch them while pip and npm fetch theirs:
# - chromium (and a CJK font for the zh-TW screenshots): the HTML report is tested in a
#   real headless browser;
# - bubblewrap and socat: command agents' runs are sandboxed with them (--isolation
#   namespace, the default), and the tests attack that sandbox.
debs:
	@pkgs=""; \
	command -v chromium >/dev/null 2>&1 || pkgs="$$pkgs chromium fonts-wqy-zenhei"; \
	command -v bwrap >/dev/null 2>&1 || pkgs="$$pkgs bubblewrap"; \
	command -v socat >/dev/null 2>&1 || pkgs="$$pkgs socat"; \
	[ -z "$$pkgs" ] || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's$$pkgs for the browser and sandbox tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs >/dev/null; \
	  else \
	    echo "missing:$$pkgs (sudo apt-get install$$pkgs; PASSHAT_SKIP_BROWSER=1 skips the browser tests)"; \
	    exit 1; \
	  fi; }
chromium bubblewrap: debs

# ruff, mypy and pytest side by side: pytest leaves about a third of the two cores idle
# (its tests wait on subprocesses, sandboxes and Chromium), which mypy's minute of one core
# fills; the installs (pip, apt, npm) run side by side before them. Their lines interleave;
# make's last line names any step that failed.
test:
	@$(MAKE) --no-print-directory -j3 lint typecheck pytest

# The providers against LiteLLM's proxy (mock models on 127.0.0.1): heavy, so on demand.
test-litellm: dev
	$(BIN)/python -m pip install -q -e '.[dev,litellm]'
	$(BIN)/pytest tests/test_litellm.py -rs

# Many SIGKILLs of a larger experiment, then the fuzzers with many more examples.
chaos: dev
	$(BIN)/python benchmarks/chaos.py

# On demand, never in `make test`. Each benchmark prints RESULT lines (ratio, target,
# PASS/MISS) into benchmarks/results/; a MISS does not stop the others. bench_html
# drives Chromium through the test helpers, hence the dev extras.
BENCHES := startup metrics runner store_growth stats report commands html run_rss command_agent spawn export dask
# Bytecode first: an editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise
# compile passhat's modules from source in every timed process (0.1 s a command), which
# no installed copy does (pip writes the .pyc files when it installs a wheel).
bench: dev chromium
	@mkdir -p benchmarks/results
	$(BIN)/python -m compileall -q src
	@for b in $(BENCHES); do \
	  echo "== bench_$$b"; \
	  $(BIN)/python benchmarks/bench_$$b.py > benchmarks/results/$$b.txt 2>&1; \
	  cat benchmarks/results/$$b.txt; \
	done
	$(BIN)/python benchmarks/readme_table.py benchmarks/results/*.txt

# passhat beside Inspect AI on the same workloads; Inspect in its own venv.
INSPECT_VENV := benchmarks/vs_inspect/.venv
$(INSPECT_VENV)/bin/inspect:
	$(PYTHON) -m venv $(INSPECT_VENV)
	$(INSPECT_VENV)/bin/python -m pip install -q -r benchmarks/vs_inspect/requirements.txt
bench-inspect: install $(INSPECT_VENV)/bin/inspect
	@mkdir -p benchmarks/results
	$(BIN)/python benchmarks/vs_inspect/run.py --inspect-python $(INSPECT_VENV)/bin/python \
	  > benchmarks/results/vs_inspect.new 2>&1; status=$$?; \
	  cat benchmarks/results/vs_inspect.new; \
	  if [ $$status -eq 0 ]; then mv benchmarks/results/vs_inspect.new benchmarks/results/vs_inspect.txt; \
	  else rm benchmarks/results/vs_inspect.new; fi; exit $$status

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(CLARIFY_TS)/node_modules $(CLARIFY_TS)/dist
