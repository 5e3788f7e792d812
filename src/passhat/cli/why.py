"""`passhat why`: what goes with a miss, within case, across the whole experiment."""

from __future__ import annotations

from typing import Annotated

import typer

from passhat.cli._app import app, console, write_json
from passhat.cli._help import examples
from passhat.cli._options import JsonOption
from passhat.cli._store import DbOption, ExperimentArg


@app.command(
    epilog=examples(
        "passhat why latest",
        "passhat why latest --item AC7:unverifiable",
        "passhat why latest --adjust holm --json",
    )
)
def why(
    experiment: ExperimentArg,
    item: Annotated[
        str | None,
        typer.Option(
            "--item", help="Only this goal item (or `pass` for pass/fail).", show_default=False
        ),
    ] = None,
    adjust: Annotated[
        str, typer.Option("--adjust", help="bh (false discovery rate) or holm (family-wise).")
    ] = "bh",
    alpha: Annotated[
        float, typer.Option("--alpha", help="The level a signature must reach.")
    ] = 0.05,
    whole_runs: Annotated[
        bool | None,
        typer.Option(
            "--whole-runs/--summaries-only",
            help="--whole-runs reads every run whole, for argument, turn and "
            "first-divergence features; --summaries-only reads the run summaries alone "
            "(tools, calls, errors, tokens). Default: whole runs up to 20,000 runs.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """What goes with a miss: run features that go with missing each goal item (or
    failing), within case across the experiment, adjusted, each with a pair to diff.

    Features: a tool called or not, call counts, an argument value, a tool error,
    turns, tokens, the step taken at the first divergence. Estimated within case
    (Mantel-Haenszel odds ratio with its interval; exact conditional test), adjusted
    for every test (Benjamini-Hochberg, or Holm), ranked by effect (docs/why.md)."""
    from rich.text import Text

    from passhat.errors import InputError
    from passhat.report.why import why_dict, why_lines
    from passhat.results import open_store

    if not 0 < alpha < 1:
        raise InputError(f"--alpha is {alpha}; give a level between 0 and 1 (e.g. 0.05)")
    found = open_store(db).experiment(experiment)
    result = found.why(item=item, adjust=adjust, alpha=alpha, whole_runs=whole_runs)
    ref = found.record.command_ref  # a shell word: the name quoted, or the id
    if as_json:
        write_json(why_dict(result, ref))
        return
    for style, line in why_lines(result, ref):
        console.print(Text(line, style=style), soft_wrap=True)
