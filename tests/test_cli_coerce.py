"""passhat.cli._coerce: plain option values converted without pydantic, to exactly
the values (and errors) typer's own conversion gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_helpers import run_cli
from passhat.cli._coerce import PLAIN, plain_value

pytestmark = pytest.mark.skipif(not PLAIN, reason="this typer converts values without pydantic")

_NOT_PLAIN = plain_value(int, "1e3")


def typer_value(annotation: Any, value: Any) -> Any:
    """What typer itself makes of `value` for an option of type `annotation`."""
    from typer._coercion import build_runtime_param, resolve_type_descriptor
    from typer.models import OptionInfo

    descriptor = resolve_type_descriptor(annotation, OptionInfo())
    return build_runtime_param(descriptor)._coerce_value(value, param=None, ctx=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        (str, "latest"),
        (str, ""),
        (str, "in=0.15,out=0.60"),
        (int, "10"),
        (int, "007"),
        (int, "-3"),
        (int, 10),
        (float, "0.95"),
        (float, "300"),
        (float, "-2.5"),
        (float, 300.0),
        (float, 10),
        (bool, True),
        (Path, "runs/passhat.db"),
        (Path, "report.html"),
        (Path, "/tmp"),
    ],
    ids=repr,
)
def test_a_plain_value_is_what_typer_makes_of_it(annotation: Any, value: Any) -> None:
    mine = plain_value(annotation, value)
    assert mine is not _NOT_PLAIN
    theirs = typer_value(annotation, value)
    assert (type(mine), mine) == (type(theirs), theirs)


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        (int, "1e3"),
        (int, "+4"),
        (int, " 5"),
        (int, "1_000"),
        (int, "10.0"),
        (int, "9" * 30),
        (float, "1e3"),
        (float, ".5"),
        (float, "nan"),
        (int, True),
        (bool, "yes"),
        (Path, ""),
        (Path, "runs//x/"),
        (Path, "./x"),
    ],
    ids=repr,
)
def test_any_other_form_is_left_to_typer(annotation: Any, value: Any) -> None:
    assert plain_value(annotation, value) is _NOT_PLAIN


@given(st.text(alphabet="0123456789-.", min_size=1, max_size=24))
def test_numbers_typed_as_digits_convert_as_typer_converts_them(text: str) -> None:
    for annotation in (int, float):
        mine = plain_value(annotation, text)
        if mine is not _NOT_PLAIN:
            theirs = typer_value(annotation, text)
            assert (type(mine), mine) == (type(theirs), theirs)


def test_a_bad_value_gets_typers_own_message(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "report", "latest", "-m", "ten", "--db", "none.db")
    assert result.code == 2
    assert result.err == (
        "passhat report: invalid value for '--forecast' / '-m': Input should be a valid "
        "integer, unable to parse string as an integer (see passhat report --help)\n"
    )


def test_a_path_option_keeps_typers_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--db, a Path converted here, still reaches the store as a Path (a missing store
    is the store's one-line error, not a conversion error)."""
    result = run_cli(capsys, "list", "--db", str(tmp_path / "missing.db"))
    assert result.code == 2
    assert "missing.db: no passhat store here" in result.err


def test_report_imports_no_pydantic(tmp_path: Path) -> None:
    """Neither typer's adapters (this module) nor pydantic-core's serializer (the store
    loads it to write, cli/_options.py keeps the verdict reader out): a report reads."""
    probe = (
        "import sys\nfrom passhat.cli import main\n"
        "try:\n    main(['report', 'latest', '-m', '5', '--db', 'x.db'])\n"
        "except SystemExit:\n    pass\n"
        "print([m for m in ('pydantic', 'pydantic_core', 'typer._adapters') if m in sys.modules],"
        " file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_a_typer_whose_runtime_param_changed_keeps_its_own_coercion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RuntimeParam is typer's private class: if a later typer builds it from other
    arguments, the command keeps typer's coercion and still converts its options."""
    import typer
    from typer.testing import CliRunner

    from passhat.cli import _coerce
    from passhat.cli._help import Command

    class Changed:
        def __init__(self, **kwargs: Any) -> None:
            raise TypeError("unexpected keyword argument 'parameter_info'")

    monkeypatch.setattr(_coerce, "_Plain", Changed)
    app = typer.Typer()

    @app.command(cls=Command)
    def twice(n: int = typer.Option(1, "-n"), name: str = typer.Option("x")) -> None:
        print(n * 2, name)

    command = typer.main.get_command(app)
    assert all(getattr(p, "_runtime_param", None) is None for p in command.params)
    result = CliRunner().invoke(app, ["-n", "21", "--name", "y"])
    assert (result.exit_code, result.output) == (0, "42 y\n")
