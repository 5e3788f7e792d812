"""The adaptive-k options of `passhat run / resume` (`--until-width W`,
`--until-decided --baseline A`) and the rounds' summary on the terminal.

The rounds themselves (checks, looks, raising k) are the library's: `passhat.rounds`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from passhat.cli import _app
from passhat.cli._help import panel_option
from passhat.errors import InputError

if TYPE_CHECKING:
    from passhat.adaptive import Adaptive  # the rounds `show` prints: `run` needs none before


def _adaptive(flag: str, metavar: str | None, help: str) -> Any:
    """An adaptive-k option: shown under its own panel in `run -h` and `resume -h`."""
    return panel_option("Adaptive k", flag, metavar=metavar, help=help)


UntilWidth = Annotated[
    float | None,
    _adaptive(
        "--until-width",
        "W",
        "Add runs round by round until the pass rate's interval is narrower than W "
        "(e.g. 0.1 = 10 points), or --max-k is reached.",
    ),
]
UntilDecided = Annotated[
    bool,
    _adaptive(
        "--until-decided",
        None,
        "Add runs round by round until compare's verdict against --baseline is "
        "decided, or --max-k is reached.",
    ),
]
Baseline = Annotated[
    str | None,
    _adaptive(
        "--baseline",
        "EXPERIMENT",
        "The stored experiment --until-decided compares with (A; this run is B).",
    ),
]
MaxK = Annotated[
    int | None,
    _adaptive(
        "--max-k",
        "K",
        "Budget of the adaptive rounds: runs per case at most. Default: 4 x the first k.",
    ),
]
KStep = Annotated[
    int | None, _adaptive("--k-step", "S", "Runs per case added each round. Default: the first k.")
]
SpendingOption = Annotated[
    str,
    _adaptive(
        "--spending",
        "RULE",
        "How the looks share alpha: bonferroni (alpha / L each), obrien-fleming "
        "(little early, most at max-k), or anytime (a confidence sequence: every case "
        "each round, valid wherever the rounds stop; use with --k-step 1 to look after "
        "every run).",
    ),
]
AllCases = Annotated[
    bool,
    _adaptive(
        "--all-cases",
        None,
        "--until-decided: add runs to every case each round (the older rule), not "
        "only to the undecided ones (whose baseline runs disagree).",
    ),
]
NoRerunBaseline = Annotated[
    bool,
    _adaptive(
        "--no-rerun-baseline",
        None,
        "--until-decided --spending anytime: keep the baseline fixed, which costs "
        "power. By default it is re-run alongside this experiment in every round and the "
        "paired differences are judged (its new runs are added to it and counted in the "
        "plan's cost); an imported baseline always stays fixed.",
    ),
]
AdaptiveJson = Annotated[
    Path | None,
    _adaptive(
        "--adaptive-json",
        "FILE",
        "Also write the rule, the looks and the runs spent to FILE as JSON.",
    ),
]


def show(result: Adaptive, json_path: Path | None) -> None:
    """The summary on the terminal, and the JSON file when asked for."""
    from rich.text import Text

    console = _app.console
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
