"""The public surface of `passhat` is small and deliberate."""

from __future__ import annotations

import subprocess
import sys

import pytest

import passhat

PRIVATE = {"annotations", "importlib", "Any", "TYPE_CHECKING"}


def test_all_is_exactly_the_public_names() -> None:
    eager = {n for n in vars(passhat) if not n.startswith("_")} - PRIVATE
    modules = {n for n in eager if type(getattr(passhat, n)).__name__ == "module"}
    public = (eager - modules) | set(passhat._LAZY)
    assert set(passhat.__all__) - {"__version__"} == public


@pytest.mark.parametrize("name", sorted(passhat.__all__))
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(passhat, name) is not None


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        passhat.nope  # noqa: B018


def test_passhat_metrics_does_not_import_suites_or_pydantic() -> None:
    code = (
        "import sys, passhat.cli; "
        "print(sorted(m for m in ('pydantic', 'yaml', 'passhat.suite', 'passhat.env') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_library_calls_are_public() -> None:
    """Running an experiment is a library call (DESIGN: library first); `passhat run`
    and the pytest plugin are shells over these names."""
    calls = {"evaluate", "evaluate_async", "resume", "resume_async", "open"}
    types = {"Experiment", "Experiments", "Events", "Outcome", "Interrupted", "Rounds"}
    assert calls | types <= set(passhat.__all__)
    assert passhat.open is passhat.results.open_store  # type: ignore[attr-defined]
    assert issubclass(passhat.Interrupted, KeyboardInterrupt)  # a notebook's Ctrl-C stays one
