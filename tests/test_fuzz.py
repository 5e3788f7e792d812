"""Property-based fuzz of what users hand passhat: suite folders and verdict files.

Whatever the input, loading either succeeds or fails with a `PasshatError` (one
line, exit 2) — never another exception, a traceback or a hang. Budget: well
under a minute in `make test`; benchmarks/chaos.py runs the same with more examples.
"""

from __future__ import annotations

import copy
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from conftest import TICKET_CASE, TICKET_SUITE
from passhat.errors import PasshatError
from passhat.report.suite import print_suite
from passhat.suite import load_suite
from passhat.verdicts import read_verdicts

EXAMPLES = int(os.environ.get("PASSHAT_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

nasty_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "\x1b]0;title\x07",
            "\x1b[2J",
            "\ud83d",
            "AC{ac:>10000000000}:{label}",
            "AC{ac:09999999}",
            "{0}",
            "{ac!r:{x}}",
            "9" * 5000,
            "a" * 10_000,
            "../../etc/passwd",
            "x.py:f",
        ]
    ),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    nasty_text,
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(nasty_text, inner, max_size=4),
    max_leaves=12,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out.extend(_paths(value, (*prefix, index)))
    return out


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    data = copy.deepcopy(data)
    target = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return data


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> str:
    """A valid document with a few places replaced by anything, or raw text."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=200))
    data: Any = base
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)))
        data = _replace(data, path, draw(values))
    try:
        return yaml.safe_dump(data, allow_unicode=True)
    except yaml.YAMLError:
        return json.dumps(data, default=str)


@FUZZ
@given(suite_text=mutated(TICKET_SUITE), case_text=mutated(TICKET_CASE))
def test_the_suite_loader_loads_or_names_the_problem(suite_text: str, case_text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "cases").mkdir()
        (root / "suite.yaml").write_text(suite_text, encoding="utf-8", errors="surrogatepass")
        (root / "cases" / "a.yaml").write_bytes(case_text.encode("utf-8", errors="surrogatepass"))
        try:
            suite = load_suite(root)
        except PasshatError as error:
            assert str(error).strip()
            return
        print_suite(Console(file=io.StringIO(), width=100), suite)


verdict_lines = st.one_of(
    st.text(max_size=80),
    values.map(lambda v: json.dumps(v, default=str)),
    st.fixed_dictionaries(
        {"case": values, "run": values, "status": values},
        optional={"extra": values},
    ).map(lambda d: json.dumps(d, default=str)),
    st.builds(
        lambda c, r, s: json.dumps({"case": c, "run": r, "status": s}),
        st.sampled_from(["a", "b", "x\x1b[2J"]),
        st.integers(min_value=-3, max_value=200_000),
        st.sampled_from(["passed", "failed", "errored", "PASSED", ""]),
    ),
)


@FUZZ
@given(lines=st.lists(verdict_lines, max_size=12))
def test_the_verdict_reader_reads_or_names_the_line(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "v.jsonl"
        path.write_bytes("\n".join(lines).encode("utf-8", errors="surrogatepass"))
        try:
            ledger = read_verdicts(path)
            accounting = ledger.close(max(ledger.max_run, 1))
            for case in accounting.cases:
                assert len(case.missing) == case.k_requested - case.completed
        except PasshatError as error:
            assert str(error).strip()


@pytest.mark.parametrize("index", [1, 99_999, 100_000])
def test_the_verdict_reader_at_the_edges_of_k(tmp_path: Path, index: int) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps({"case": "a", "run": index, "status": "passed"}) + "\n")
    accounting = read_verdicts(path).close(index)
    assert len(accounting.cases[0].missing) == index - 1
