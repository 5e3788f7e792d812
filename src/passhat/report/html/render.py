"""The page itself: the Jinja environment and the one script with its CSP hash, the why of
the first cases, the template's context, `render_html` and `write_html`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import shlex
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from markupsafe import Markup, escape

from passhat.accounting import Accounting
from passhat.adaptive import record_lines
from passhat.analysis import tool_profile
from passhat.errors import ConfigError
from passhat.limits import limit_runs
from passhat.records import ExperimentRecord, RunRecord, RunSummary
from passhat.report.console import escape_direction
from passhat.report.experiment import experiment_accounting, replayed_runs
from passhat.report.html import pages as paging
from passhat.report.html.facts import (
    CONFIDENCE,
    LIST_LIMIT,
    LoadRuns,
    _analysed,
    _calls_range,
    _case_facts,
    _case_view,
    _CaseView,
    _curves,
    _figures,
    _header,
    _item_totals,
    _pct,
    _shown,
)
from passhat.report.html.pages import (
    _cases_blob,
    _pages,
    _pair_cases,
    _usage,
    _usage_columns,
)
from passhat.report.html.runs import _embedded_runs, script_json
from passhat.report.i18n import LABELS, check_lang, t, tn
from passhat.report.parts import money
from passhat.report.terminal import plan_met_line, plan_not_met_line
from passhat.stats import JEFFREYS, CaseForecast, case_intervals, forecast_counts
from passhat.usage import Prices

if TYPE_CHECKING:
    import jinja2

    from passhat.report.why import Explainer
    from passhat.signatures import Why


# --------------------------------------------------------------------------- rendering


def templates(package: str) -> jinja2.Environment:
    """The jinja2 environment of every page passhat writes or serves (the report's and
    `passhat view`'s): the templates of `package`, everything escaped (model output is
    data: markup, and direction characters, `shown`), an undefined name an error."""
    try:
        import jinja2
    except ImportError:  # pragma: no cover - jinja2 is the `html` extra
        raise ConfigError(
            'the HTML report needs jinja2: install it with pip install "passhat[html]"'
        ) from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=shown,
    )
    env.filters["verbatim"] = Verbatim.of
    return env


class Verbatim(Markup):
    """A value sent back as it is (a form's value): HTML-escaped, its direction
    characters kept (`{{ case|verbatim }}`); everything else a page shows is `shown`."""

    @classmethod
    def of(cls, value: object) -> Verbatim:
        return cls(escape(value))


def shown(value: object) -> object:
    """What a page shows of a `{{ value }}`, before Jinja escapes it: its direction
    characters as their escapes (`\\u202e`, as the terminal shows them: escape_direction),
    so a case id, an answer or an error never reorders the text around it. Markup too
    (`|join` of data makes one; JSON in a script stays the same JSON), not `Verbatim`."""
    if type(value) is str:  # most values: ids, numbers as text, labels
        return value if value.isascii() else escape_direction(value)
    if type(value) is Markup:  # not a subclass: Verbatim's value is kept
        escaped = escape_direction(value)
        return value if escaped is value else Markup(escaped)
    return value


COMPILED_AS = "shown1"
"""The settings templates are compiled under (finalize=shown), in the compiled code's
cache key: change it with them, or a user's cache runs code compiled without them."""


@cache
def _environment() -> jinja2.Environment:
    env = templates("passhat.report")
    env.bytecode_cache = _compiled()
    env.filters["pct"] = _pct
    env.filters["money"] = money
    return env


def _compiled() -> jinja2.BytecodeCache | None:
    """Where the templates' compiled code is kept between reports: jinja2's own per-user
    folder in the temporary directory (made private to the user, and checked to be,
    by jinja2), each template's code keyed by its path and its text, so an edited
    template is compiled again. Compiling the report's four templates took 0.1 s of
    CPU of every `report --html`; loading their code, under 0.02 s. None when no such
    folder can be made: the templates are then compiled each time, as before."""
    import jinja2

    class Kept(jinja2.FileSystemBytecodeCache):
        """A folder that cannot be read or written (full, read-only) is no error: the
        templates are then compiled, as before. Code compiled under other settings of the
        environment (before `shown` finalized every value) is not reused: the key names
        them, beside the template's path (the text is checked by jinja2)."""

        def get_cache_key(self, name: str, filename: str | None = None) -> str:
            return f"{super().get_cache_key(name, filename)}-{COMPILED_AS}"

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):
                super().load_bytecode(bucket)

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    try:
        return Kept()
    except (OSError, RuntimeError):  # jinja2 raises RuntimeError for an unsafe folder
        return None


@cache
def _script() -> tuple[Markup, str]:
    """The page's one script and its CSP hash (so no other script can run)."""
    text = _environment().get_template("_script.html.j2").render()
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return Markup(text), f"'sha256-{digest}'"


def _translator(lang: str) -> Callable[..., str]:
    def translate(key: str, **values: object) -> str:
        return t(key, lang, **values)

    return translate


def _verdict_labeler(lang: str) -> Callable[[str], str]:
    """Label of a verdict key; one the catalog does not know is shown in words."""

    def label(key: str) -> str:
        return LABELS[lang].get(key, key.replace("_", " "))

    return label


def _per_case_uncertainty(
    accounting: Accounting, m: int, only: set[str]
) -> dict[str, dict[str, Any]]:
    """Per case of `only`, as the terminal shows it: the Wilson interval of the rate, and
    the chance the next m runs all pass with its credible interval (`forecast`'s cases,
    under its Jeffreys prior: `forecast_counts` of theirs alone, without the dataset's
    share, which the page does not show from here and which took 0.1 s of 1,000 x 100)."""
    intervals = {c.case: c for c in case_intervals(accounting, CONFIDENCE, only=only)}
    counted = [x for x in accounting.cases if x.counted and x.case in only]
    if not counted:
        return {}
    expected, low, high = forecast_counts(
        [x.counted for x in counted],
        [x.passes for x in counted],
        m,
        prior=JEFFREYS,
        confidence=CONFIDENCE,
    )
    forecasts = {
        x.case: CaseForecast(x.case, x.counted, x.passes, m, e, lo, hi)
        for x, e, lo, hi in zip(
            counted, expected.tolist(), low.tolist(), high.tolist(), strict=True
        )
    }
    return {case: {"rate": i, "next": forecasts[case]} for case, i in intervals.items()}


WHY_CASES = 30
"""Cases of the first page that get their divergence tree, evidence and pairs (as the
terminal report explains the 30 cases it lists): each reads its whole runs again."""
PAIRS_PER_PAGE = 900
"""Pairs of runs whose diffs a page carries at most (about a millisecond each to make):
20 cases of 10 runs, or 300 of 3; the cases past them name the `passhat diff` command."""


def _why(
    explainer: Explainer,
    view: _CaseView,
    experiment: ExperimentRecord,
    lang: str,
    budget: list[int],
) -> dict[str, Any] | None:
    """A case's divergence tree, item evidence and the diffs of its pairs of runs (up to
    `PAIR_RUNS` runs, while the page's `budget` of pairs lasts; past that the picker
    names the `passhat diff` command)."""
    from passhat.divergence import diff_runs
    from passhat.report.diff import PAIR_RUNS, pair_dict, why_view

    case = view.account.case
    runs = sorted(explainer.load(case), key=lambda r: r.run_index)
    if not runs:
        return None
    data = why_view(explainer.explain(case, runs), lang)
    indices = [r.run_index for r in runs]
    data["runs"] = indices
    data["pairs"] = None
    data["too_many"] = None
    n_pairs = len(runs) * (len(runs) - 1) // 2
    if len(runs) > PAIR_RUNS or n_pairs > budget[0]:
        ref, word = experiment.command_ref, shlex.quote(case)
        data["too_many"] = t("pair_too_many", lang, n=len(runs), ref=ref, case=word)
    elif len(runs) > 1:
        budget[0] -= n_pairs
        cache: dict[int, Any] = {}  # each run cut into turns and calls once
        pairs = [
            pair_dict(diff_runs(a, b, cache)) for i, a in enumerate(runs) for b in runs[i + 1 :]
        ]
        data["pairs"] = script_json(pairs)
    return data


def _detail_note(
    pages: list[list[Any]], embedded: int, experiment: ExperimentRecord, lang: str
) -> str | None:
    """What the page says of the run detail it leaves out (`runs.EMBEDDED_RUNS`): which
    cases' runs it carries, and the commands that show any other run; None when it
    carries every run's."""
    if embedded >= len(pages):
        return None
    last = pages[embedded - 1][-1].number
    ref = experiment.command_ref
    return t("detail_left_out", lang, last=last, cases=pages[-1][-1].number, ref=ref)


def _signatures(
    why: Why, experiment: ExperimentRecord, cases: Sequence[Any]
) -> list[dict[str, Any]]:
    """The page's failure signatures (capped as the terminal's), each with an example
    pair: a link that opens the case's compare on it, and the `passhat diff` command."""
    from passhat.report.why import SIGNATURES_SHOWN, diff_command, signature_sentence

    if why.too_few:
        return []
    anchors = {c.account.case: c.anchor for c in cases}
    ref = experiment.command_ref
    out = []
    for s in why.signatures[:SIGNATURES_SHOWN]:
        pair = s.test.pairs[0] if s.test.pairs else None
        out.append(
            {
                "sentence": signature_sentence(s, why.adjust),
                "case": pair[0] if pair else None,
                "anchor": anchors.get(pair[0]) if pair else None,
                "missed": pair[1] if pair else None,
                "found": pair[2] if pair else None,
                "command": diff_command(ref, pair) if pair else None,
            }
        )
    return out


def _context(
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    lang: str,
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
    why: Explainer | None = None,
    accounting: Accounting | None = None,
) -> dict[str, Any]:
    if accounting is None:
        accounting = experiment_accounting(experiment, runs)
    cases = _case_facts(runs, accounting)
    pages = _pages(cases)
    counted = accounting.runs_counted > 0
    figures, ci_reason = _figures(accounting, lang) if counted else ([], None)
    script, script_hash = _script()
    errored = [r for r in runs if r.status == "errored"]
    limited = list(limit_runs(runs).items())
    missing = [c for c in cases if c.account.missing]
    rest = [c for page in pages[1:] for c in page]
    pairs = _pair_cases(rest)
    shown = {c.account.case for c in pages[0]} | set(pairs.values())
    per_case = _per_case_uncertainty(accounting, forecast_m, shown) if counted else {}
    usage = _usage(pages[0], runs, prices)
    tokens = usage["experiment"]
    has_usage = tokens["input_tokens"] + tokens["output_tokens"] > 0 or prices is not None
    dataset_tools = tool_profile(runs, experiment.tools, per_case=False)
    tools = [u.tool for u in dataset_tools]
    verdicts: Counter[str] = Counter()
    page_views = [_case_view(*case) for case in _analysed(pages[0], tools)]
    overview = why.overview(runs) if why is not None else None
    signatures = _signatures(overview, experiment, cases) if overview is not None else []
    if why is not None:
        budget = [PAIRS_PER_PAGE]
        for n, view in enumerate(page_views):
            if n < WHY_CASES:
                view.why = _why(why, view, experiment, lang, budget)
            else:
                view.why = {"skipped": t("why_skipped", lang, n=WHY_CASES)}
    for view in page_views:
        verdicts.update(row.stability.verdict for rows in view.groups.values() for row in rows)
    pages_blob = _cases_blob(  # counts the verdicts of the other pages' items
        pages,
        {pair: per_case[case] for pair, case in pairs.items()},
        round(CONFIDENCE * 100),
        _usage_columns(rest, prices) if has_usage else None,
        tools,
        verdicts,
    )
    listed = {r.case_id for r in errored[:LIST_LIMIT]}
    runs_blobs = _embedded_runs(pages, load)
    context = {
        "lang": lang,
        "t": _translator(lang),
        "tn": lambda key, n: tn(key, lang, n),
        "verdict_label": _verdict_labeler(lang),
        "shown_label": lambda label: _shown(label, lang),
        "e": experiment,
        "header": _header(experiment, runs, lang),
        "accounting": accounting,
        "summary": accounting.dataset() if counted else None,
        "ledger": accounting.error_ledger() if counted else None,
        "at_requested": accounting.at_requested() if counted else None,
        "plan_met": plan_met_line(accounting, lang),
        "adaptive": [record_lines(r) for r in experiment.adaptive],
        "plan_not_met": (
            plan_not_met_line(accounting, lang, name=lambda label: _shown(label, lang))
            if counted
            else None
        ),
        "figures": figures,
        "ci_reason": ci_reason,
        "ci_level": round(CONFIDENCE * 100),
        "curves": _curves(accounting) if counted else None,
        "page_views": page_views,
        "signatures": signatures,
        "signatures_more": (f"passhat why {experiment.command_ref}" if signatures else None),
        "pages": len(pages),
        "page_cases": paging.PAGE_CASES,  # read when called: a test makes pages smaller
        "list_limit": LIST_LIMIT,
        "anchor_of": {c.account.case: c.anchor for c in cases if c.account.case in listed},
        "item_totals": _item_totals(verdicts),
        "errored": errored[:LIST_LIMIT],
        "errored_more": max(0, len(errored) - LIST_LIMIT),
        "limited": limited[:LIST_LIMIT],
        "limited_more": max(0, len(limited) - LIST_LIMIT),
        "missing_cases": missing[:LIST_LIMIT],
        "missing_more": max(0, len(missing) - LIST_LIMIT),
        "replayed": replayed_runs(runs),
        "per_case": per_case,
        "forecast_m": forecast_m,
        "usage": usage,
        "prices": prices,
        "dataset_tools": dataset_tools,
        "calls_range": {u.tool: _calls_range(u.calls_per_run) for u in dataset_tools},
        "labels": script_json(LABELS[lang]),
        "runs_blobs": runs_blobs,
        "detail_note": _detail_note(pages, len(runs_blobs), experiment, lang),
        "script": script,
        "script_hash": script_hash,
    }
    context["pages_blob"] = pages_blob
    return context


class PageOptions(TypedDict, total=False):
    """What a page is made with besides the experiment and its runs (`render_html`)."""

    lang: str
    load: LoadRuns | None
    prices: Prices | None
    forecast_m: int
    why: Explainer | None
    accounting: Accounting | None


def render_html(
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    *,
    lang: str = "en",
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
    why: Explainer | None = None,
    accounting: Accounting | None = None,
) -> str:
    """The whole report as one self-contained HTML page.

    Pass whole runs (`store.runs(id)`) so the transcripts are included, or the
    summaries (`store.summaries(id)`) and `load`, which fetches the whole runs of
    the pages whose detail is embedded: a report of 100,000 runs then never holds
    them all. Light runs give the same page with the transcripts left out. With `why`
    (`passhat.report.why.Explainer`), each case of the first page shows its divergence
    tree and item evidence, and two of its runs can be picked and compared. Pass
    `accounting` when you have it (`experiment_accounting(experiment, runs)`) so it is
    not made twice.
    """
    lang = check_lang(lang)
    template = _environment().get_template("report.html.j2")
    context = _context(experiment, runs, lang, load, prices, forecast_m, why, accounting)
    return template.render(context)


def write_html(
    path: str | Path,
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    **options: Unpack[PageOptions],
) -> Path:
    """Render the report (`render_html`, with its `options`) and write it to `path`
    (UTF-8); return the path."""
    target = Path(path)
    target.write_text(render_html(experiment, runs, **options), encoding="utf-8")
    return target
