# Two commands: `make demo` and `make test`. Both create .venv and install into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test install dev lint typecheck pytest bench clean

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

pytest: dev
	$(BIN)/pytest

test: lint typecheck pytest

bench: install
	$(BIN)/python benchmarks/bench_metrics.py
	$(BIN)/python benchmarks/bench_runner.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
