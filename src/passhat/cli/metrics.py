"""`passhat metrics`: the three numbers and the accounting for your own verdicts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from passhat._gc import without_gc
from passhat.cli._app import app, console, write_json
from passhat.cli._help import examples
from passhat.cli._options import (
    AllCasesOption,
    JsonOption,
    LangOption,
    StrictOption,
    check_forecast,
    confidence_option,
    forecast_option,
    k_option,
    report_lang,
    resamples_option,
    seed_option,
)
from passhat.errors import InputError, MetricsError
from passhat.report.terminal import ROWS_SHOWN, print_metrics, shown_cases
from passhat.stats import DEFAULT_RESAMPLES, JEFFREYS, UNIFORM, Prior, Resampling, uncertainty
from passhat.stats._base import _check_resamples
from passhat.verdicts import read_verdicts

PRIORS: dict[str, Prior] = {"jeffreys": JEFFREYS, "uniform": UNIFORM, "fitted": "fitted"}


def check_resamples(resamples: int) -> None:
    """--resamples, checked before the verdicts are read: the statistics' own check,
    its message naming the option."""
    try:
        _check_resamples(resamples)
    except MetricsError as error:
        raise InputError(f"--{error}") from None


def check_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise InputError(f"--k is {k}; ask for at least 1 run per case")


def check_confidence(confidence: float) -> None:
    if not 0.5 <= confidence < 1:
        raise InputError(f"--confidence is {confidence}; give a level between 0.5 and 1, e.g. 0.95")


def resampling(resamples: int, confidence: float, seed: int) -> Resampling:
    """--resamples, --confidence and --seed, checked before anything is read (each message
    naming its option), as the keywords every resampled figure takes."""
    check_resamples(resamples)
    check_confidence(confidence)
    if seed < 0:  # numpy's generator takes none: a ValueError traceback
        raise InputError(f"--seed is {seed}; give a whole number of 0 or more, e.g. 0")
    return Resampling(resamples=resamples, confidence=confidence, seed=seed)


@app.command(
    epilog=examples(
        "passhat metrics verdicts.jsonl",
        "passhat metrics verdicts.jsonl --k 5 --strict",
        "passhat metrics verdicts.jsonl --plan 0.05 --json",
    )
)
@without_gc  # a million verdicts: see passhat._gc
def metrics(
    file: Annotated[
        Path, typer.Argument(help="JSONL verdict file: one {case, run, status} per line.")
    ],
    k: Annotated[
        int | None, k_option("Requested runs per case. Default: the largest run index seen.")
    ] = None,
    as_json: JsonOption = False,
    strict: StrictOption = False,
    forecast_m: Annotated[
        int, forecast_option("Forecast the chance that each case's next M runs all pass.")
    ] = 10,
    resamples: Annotated[
        int, resamples_option("Cluster-bootstrap resamples (at least 100).")
    ] = DEFAULT_RESAMPLES,
    seed: Annotated[int, seed_option("Seed of the bootstrap.")] = 0,
    confidence: Annotated[float, confidence_option("Level of every interval.")] = 0.95,
    prior: Annotated[
        str,
        typer.Option(
            "--prior",
            help="Forecast prior per case: jeffreys (Beta(1/2, 1/2)), uniform (Beta(1, 1)) "
            "or fitted (one Beta fitted to all cases).",
        ),
    ] = "jeffreys",
    target: Annotated[
        float | None,
        typer.Option(
            "--plan",
            help="Target half-width (e.g. 0.05 for ±5 points): runs per case and cases to reach it.",
            metavar="H",
        ),
    ] = None,
    show_all: AllCasesOption = False,
    lang: LangOption = None,
) -> None:
    """Pass rate, pass@k and pass^k for verdicts from any harness, with run accounting,
    intervals and a forecast of the next runs."""
    language = report_lang(lang)
    check_k(k)
    check_forecast(forecast_m)
    drawn = resampling(resamples, confidence, seed)
    if target is not None and not 0 < target < 0.5:
        raise InputError(
            f"--plan is {target}; give the half-width as a fraction, e.g. 0.05 for ±5 points"
        )
    if prior not in PRIORS:
        raise InputError(f"--prior is {prior!r}; use one of {', '.join(PRIORS)}")
    ledger = read_verdicts(file)
    k_inferred = k is None
    accounting = ledger.close(ledger.max_run if k is None else k)
    limit = None if show_all or as_json else ROWS_SHOWN
    # JSON for a pipe is written shape by shape (see report/summary_json.py): per-case
    # intervals are needed only for one case of each (counted, passes)
    streamed = as_json and not sys.stdout.isatty()
    only: set[str] | None = None
    if streamed:
        from passhat.report.summary_json import representatives, summary_json_chunks

        only = representatives(accounting)
    elif limit is not None:
        only = {c.case for c in shown_cases(accounting, limit)}
    u = uncertainty(
        accounting,
        m=forecast_m,
        target=target,
        prior=PRIORS[prior],
        only=only,
        **drawn,
    )
    if streamed:
        for chunk in summary_json_chunks(accounting, u, k_inferred=k_inferred):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
    elif as_json:  # indented for a person at a terminal
        from passhat.report.summary import summary_with_uncertainty

        write_json(summary_with_uncertainty(accounting, u, k_inferred=k_inferred))
    else:
        print_metrics(
            console,
            accounting,
            k_inferred=k_inferred,
            title=str(file),
            uncertainty=u,
            limit=limit,
            lang=language,
        )
    if strict and not accounting.complete:
        raise typer.Exit(1)
