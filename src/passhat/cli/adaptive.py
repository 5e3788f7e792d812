"""The adaptive-k options of `passhat run / resume` (`--until-width W`,
`--until-decided --baseline A`) and the rounds' summary on the terminal.

The rounds themselves (checks, looks, raising k) are the library's: `passhat.rounds`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from passhat.adaptive import Adaptive
from passhat.cli._app import console
from passhat.errors import InputError

UntilWidth = Annotated[
    float | None,
    typer.Option(
        "--until-width",
        metavar="W",
        help="Add runs round by round until the pass rate's interval is narrower than W "
        "(e.g. 0.1 = 10 points), or --max-k is reached.",
        rich_help_panel="Adaptive k",
    ),
]
UntilDecided = Annotated[
    bool,
    typer.Option(
        "--until-decided",
        help="Add runs round by round until compare's verdict against --baseline is "
        "decided, or --max-k is reached.",
        rich_help_panel="Adaptive k",
    ),
]
Baseline = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        metavar="EXPERIMENT",
        help="The stored experiment --until-decided compares with (A; this run is B).",
        rich_help_panel="Adaptive k",
    ),
]
MaxK = Annotated[
    int | None,
    typer.Option(
        "--max-k",
        metavar="K",
        help="Budget of the adaptive rounds: runs per case at most. Default: 4 x the first k.",
        rich_help_panel="Adaptive k",
    ),
]
KStep = Annotated[
    int | None,
    typer.Option(
        "--k-step",
        metavar="S",
        help="Runs per case added each round. Default: the first k.",
        rich_help_panel="Adaptive k",
    ),
]
SpendingOption = Annotated[
    str,
    typer.Option(
        "--spending",
        metavar="RULE",
        help="How the looks share alpha: bonferroni (alpha / L each), obrien-fleming "
        "(little early, most at max-k), or anytime (a confidence sequence: every case "
        "each round, valid wherever the rounds stop; use with --k-step 1 to look after "
        "every run).",
        rich_help_panel="Adaptive k",
    ),
]
AllCases = Annotated[
    bool,
    typer.Option(
        "--all-cases",
        help="--until-decided: add runs to every case each round (the older rule), not "
        "only to the undecided ones (whose baseline runs disagree).",
        rich_help_panel="Adaptive k",
    ),
]
NoRerunBaseline = Annotated[
    bool,
    typer.Option(
        "--no-rerun-baseline",
        help="--until-decided --spending anytime: keep the baseline fixed, which costs "
        "power. By default it is re-run alongside this experiment in every round and the "
        "paired differences are judged (its new runs are added to it and counted in the "
        "plan's cost); an imported baseline always stays fixed.",
        rich_help_panel="Adaptive k",
    ),
]
AdaptiveJson = Annotated[
    Path | None,
    typer.Option(
        "--adaptive-json",
        metavar="FILE",
        help="Also write the rule, the looks and the runs spent to FILE as JSON.",
        rich_help_panel="Adaptive k",
    ),
]


def show(result: Adaptive, json_path: Path | None) -> None:
    """The summary on the terminal, and the JSON file when asked for."""
    console.print()
    for line in result.lines():
        console.print(Text(line), soft_wrap=True)
    if json_path is not None:
        try:
            json_path.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            raise InputError(
                f"--adaptive-json {json_path}: cannot write ({error.strerror})"
            ) from None
