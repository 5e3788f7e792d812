"""`passhat compare A B`: is configuration B really better than A, or did it get lucky?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer

from passhat.accounting import Accounting
from passhat.cli._app import app, console, write_json
from passhat.cli.metrics import check_confidence, check_resamples
from passhat.errors import InputError
from passhat.report.summary import comparison_dict
from passhat.report.terminal import print_comparison
from passhat.stats import DEFAULT_RESAMPLES, METRICS, Metric, check_suites, compare
from passhat.verdicts import read_verdicts


def _load(path: Path, k: int | None) -> tuple[Accounting, bool]:
    ledger = read_verdicts(path)
    return ledger.close(ledger.max_run if k is None else k), k is None


@app.command(name="compare")
def compare_command(
    a: Annotated[Path, typer.Argument(help="Verdict file of configuration A (the baseline).")],
    b: Annotated[Path, typer.Argument(help="Verdict file of configuration B (the candidate).")],
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            "-k",
            help="Requested runs per case on both sides. Default: each side's largest run index.",
        ),
    ] = None,
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help="Figure the verdict rests on: pass@1, pass@k or pass^k "
            "(k = the largest j both sides reach).",
        ),
    ] = "pass@1",
    resamples: Annotated[
        int,
        typer.Option(
            "--resamples",
            "-B",
            help="Bootstrap resamples and sign flips (at least 100).",
            metavar="B",
        ),
    ] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap and the flips.")] = 0,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Interval level; the test uses 1 - this.")
    ] = 0.95,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when B is worse (for CI gates).")
    ] = False,
    allow_different_suites: Annotated[
        bool,
        typer.Option(
            "--allow-different-suites",
            help="Compare experiments of different suites on their shared cases.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Compare B with A case by case: differences with intervals, p-values, the minimum
    detectable difference, and a verdict."""
    if k is not None and k < 1:
        raise InputError(f"--k is {k}; ask for at least 1 run per case")
    if metric not in METRICS:
        raise InputError(f"--metric is {metric!r}; use one of {', '.join(METRICS)}")
    check_resamples(resamples)
    check_confidence(confidence)
    # Verdict files carry no suite hash; stored experiments will pass theirs here.
    notes = check_suites(None, None, allow_different=allow_different_suites)
    acc_a, inferred_a = _load(a, k)
    acc_b, inferred_b = _load(b, k)
    result = compare(
        acc_a,
        acc_b,
        metric=cast(Metric, metric),
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        notes=notes,
    )
    if as_json:
        data = comparison_dict(
            result,
            source_a=str(a),
            source_b=str(b),
            k_inferred_a=inferred_a,
            k_inferred_b=inferred_b,
        )
        write_json(data)
    else:
        print_comparison(
            console,
            result,
            source_a=str(a),
            source_b=str(b),
            k_inferred_a=inferred_a,
            k_inferred_b=inferred_b,
        )
    if fail_on_regression and result.verdict.outcome == "worse":
        raise typer.Exit(1)
