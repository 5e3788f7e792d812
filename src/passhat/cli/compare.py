"""`passhat compare A B`: is configuration B really better than A, or did it get lucky?"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from passhat.accounting import Accounting, account
from passhat.cli._app import app, console, write_json
from passhat.cli._help import examples
from passhat.cli._options import (
    JsonOption,
    JunitOption,
    LangOption,
    PriceOption,
    PricesOption,
    SummaryOption,
    confidence_option,
    k_option,
    report_lang,
    resamples_option,
    seed_option,
    write_ci,
)
from passhat.cli._store import DbOption, open_store
from passhat.cli.metrics import check_k, resampling
from passhat.errors import InputError
from passhat.plain import plural
from passhat.report.digest import tallied
from passhat.report.i18n import t
from passhat.report.summary import comparison_dict
from passhat.report.terminal import CASES_SHOWN, ROWS_SHOWN, print_comparison, usage_line
from passhat.stats import (
    CORRECTIONS,
    DEFAULT_RESAMPLES,
    METRICS,
    Adjust,
    Metric,
    check_suites,
    compare,
)
from passhat.usage import (
    Prices,
    TokenUsage,
    choose_prices,
    cost_at,
    usage_difference,
    usage_of,
)
from passhat.verdicts import read_verdicts

if TYPE_CHECKING:
    from passhat.records import ExperimentRecord
    from passhat.store import Store


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its accounting and where it came from."""

    accounting: Accounting
    source: str
    """Where the runs came from, in English (the JSON's words)."""
    k_inferred: bool
    suite_hash: str | None
    experiment: tuple[str, str, str] | None = None
    """A stored experiment's name (or id), agent and model; None for a verdict file."""
    usage: TokenUsage | None = None
    """Tokens (and cost, with prices) of a stored experiment's runs; None for a verdict file."""

    def shown(self, lang: str) -> str:
        """`source` in `lang`: a file path stays as it is."""
        if self.experiment is None:
            return self.source
        name, agent, model = self.experiment
        return t("experiment_source", lang, name=name, agent=agent, model=model or "–")


def _load(
    ref: str, k: int | None, db: Path | None, price: str | None, prices_file: Path | None
) -> Side:
    """A verdict file when `ref` is an existing file, else a stored experiment."""
    if Path(ref).is_file():
        ledger = read_verdicts(ref)
        accounting = ledger.close(ledger.max_run if k is None else k)
        return Side(accounting, ref, k is None, None)
    if ref.endswith(".jsonl") or ("/" in ref and not Path(ref).exists()):
        raise InputError(f"{ref}: no such verdict file; give a .jsonl file or an experiment id")
    with open_store(db, read_only=True) as store:
        experiment = store.experiment(ref)
        if k is not None:
            raise InputError(
                f"--k is for verdict files; experiment {ref!r} already asks for "
                f"{plural(experiment.k_requested, 'run')} per case"
            )
        prices = choose_prices(price, prices_file, experiment.model)
        accounting, usage = _counted(store, experiment, prices)
    from passhat.records import agent_label

    name = experiment.name or experiment.id
    side = Side(
        accounting,
        "",
        False,
        experiment.suite_hash,
        (name, agent_label(experiment.agent), experiment.model),
        usage,
    )
    return replace(side, source=side.shown("en"))


def _counted(
    store: Store, experiment: ExperimentRecord, prices: Prices | None
) -> tuple[Accounting, TokenUsage]:
    """A stored side's accounting and tokens: a comparison needs each run's status and
    tokens only, counted per case in SQL as `report --json` counts them (`Store.tallies`,
    `digest.tallied`), no run taken into Python. Runs that cannot be counted so (a damaged
    store, a run beyond its case's k, a token count not a whole number) are streamed run
    by run, and what is wrong with them said as it is of the runs."""
    tallies = store.tallies(experiment.id, parts=False, errored_runs=False)
    counted = None
    if tallies is not None and store.whole_tokens(experiment.id):
        counted = tallied(tallies, experiment, 0)
    if counted is None:
        accounting = account(
            store.statuses(experiment.id),
            experiment.k_requested,
            experiment.case_ids,
            experiment.case_k,
        )
        return accounting, usage_of(store.tokens(experiment.id), prices)
    read, accounting = counted
    i, o = read.input_tokens, read.output_tokens
    return accounting, TokenUsage(read.runs, i, o, cost_at(prices, i, o))


@app.command(
    name="compare",
    epilog=examples(
        "passhat compare baseline candidate",
        "passhat compare a.jsonl b.jsonl --metric pass^k --fail-on-regression",
    ),
)
def compare_command(
    a: Annotated[
        str,
        typer.Argument(help="Configuration A (the baseline): a verdict file or an experiment."),
    ],
    b: Annotated[
        str,
        typer.Argument(help="Configuration B (the candidate): a verdict file or an experiment."),
    ],
    k: Annotated[
        int | None,
        k_option("Requested runs per case on both sides. Default: each side's largest run index."),
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
        int, resamples_option("Bootstrap resamples and sign flips (at least 100).")
    ] = DEFAULT_RESAMPLES,
    seed: Annotated[int, seed_option("Seed of the bootstrap and the flips.")] = 0,
    confidence: Annotated[
        float, confidence_option("Interval level; the test uses 1 - this.")
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
    adjust: Annotated[
        str,
        typer.Option(
            "--adjust",
            help="Per-case tests adjusted for testing every case: bh (Benjamini-Hochberg, "
            "false discovery rate) or holm (Holm, family-wise error).",
        ),
    ] = "bh",
    as_json: JsonOption = False,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help=f"List every case short of the plan, on one side only or moved "
            f"(default: at most {ROWS_SHOWN} short or one-sided, {CASES_SHOWN} moved).",
        ),
    ] = False,
    db: DbOption = None,
    lang: LangOption = None,
    price: PriceOption = None,
    prices_file: PricesOption = None,
    junit_xml: JunitOption = None,
    summary: SummaryOption = None,
) -> None:
    """Compare B with A case by case: differences with intervals, p-values, the minimum
    detectable difference, and a verdict."""
    language = report_lang(lang)
    check_k(k)
    if metric not in METRICS:
        raise InputError(f"--metric is {metric!r}; use one of {', '.join(METRICS)}")
    drawn = resampling(resamples, confidence, seed)
    if adjust not in CORRECTIONS:
        raise InputError(f"--adjust is {adjust!r}; use holm or bh")
    side_a = _load(a, k, db, price, prices_file)
    side_b = _load(b, k, db, price, prices_file)
    notes = check_suites(
        side_a.suite_hash, side_b.suite_hash, allow_different=allow_different_suites
    )
    from passhat.adaptive import varied_k_notes

    notes += varied_k_notes((("A", side_a.accounting), ("B", side_b.accounting)))
    result = compare(
        side_a.accounting,
        side_b.accounting,
        metric=cast(Metric, metric),
        notes=notes,
        adjust=cast(Adjust, adjust),
        **drawn,
    )
    if as_json:
        data = comparison_dict(
            result,
            source_a=side_a.source,
            source_b=side_b.source,
            k_inferred_a=side_a.k_inferred,
            k_inferred_b=side_b.k_inferred,
        )
        data["usage"] = usage_difference(side_a.usage, side_b.usage)
        write_json(data)
    else:
        print_comparison(
            console,
            result,
            source_a=side_a.shown(language),
            source_b=side_b.shown(language),
            k_inferred_a=side_a.k_inferred,
            k_inferred_b=side_b.k_inferred,
            lang=language,
            usage=usage_line(side_a.usage, side_b.usage, language),
            limit=None if show_all else ROWS_SHOWN,
        )
    if junit_xml is not None or summary is not None:
        from passhat.report.ci import comparison_junit, comparison_markdown

        a_name, b_name = side_a.source, side_b.source
        write_ci(
            junit_xml,
            lambda: comparison_junit(result, a_name, b_name),
            summary,
            lambda: comparison_markdown(result, a_name, b_name),
        )
    if fail_on_regression and result.verdict.outcome == "worse":
        raise typer.Exit(1)
