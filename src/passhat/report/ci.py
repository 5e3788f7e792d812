"""CI outputs: a JUnit XML file and a Markdown summary (for $GITHUB_STEP_SUMMARY).

Pure functions from an experiment's record and accounting (and its intervals), or
from a comparison, to text; the CLI writes the files (`--junit-xml`, `--summary`).

JUnit: one test case per case of the experiment. A case passes when every requested
run passed (pass^k at the requested k); a counted run that failed makes a `<failure>`
naming the failed runs and the goal items they missed; errored or missing runs with
no failure make an `<error>` with the errors' kinds and messages: a run with no verdict
is never reported as a failure, nor as a pass. The accounting and the figures (with
their intervals) are the suite's `<properties>`; `time` is the runs' durations and
`timestamp` the experiment's creation (UTC). The file is valid under Ant's JUnit
schema and Jenkins's (xunit-plugin junit-10.xsd): tests/junit_schema.py checks it.
For a comparison: one test case per paired case (a `<failure>` when B is worse on
it, after the per-case correction) and one for the verdict (a `<failure>` when B
is worse).

Model output and ids are data: XML is escaped by ElementTree (and characters XML
cannot hold are dropped); Markdown cells are escaped, HTML included; in both, control,
direction and invisible characters are written as their escapes (as the terminal shows
them): a CI log that prints either file obeys an ESC or an 8-bit CSI.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passhat.accounting import Accounting, CaseAccount
from passhat.gate import CaseShort, case_shorts
from passhat.records import ExperimentRecord, RunSummary
from passhat.report.console import escape_controls
from passhat.report.loss import loss_line
from passhat.stats import Comparison, Difference, Uncertainty

if TYPE_CHECKING:
    from passhat.analysis import ItemStability

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
"""What changes the meaning of text inside a table cell or a line (HTML is escaped apart)."""


def _x(text: object) -> str:
    """Text XML 1.0 can hold (ElementTree escapes the rest), its control, direction and
    invisible characters as their escapes (a CI's page shows it, a CI's log prints it:
    C1's CSI, which XML holds, was written as it came); but newline and tab."""
    return _NOT_XML.sub("", escape_controls(str(text)))


def md(text: object) -> str:
    """Text safe in a Markdown table cell: markup characters escaped, no HTML, one line,
    control and direction characters as their escapes (`\\x1b`, `\\u202e`, the backslash
    escaped too): the file is also printed to CI logs, whose pages obey ESC."""
    plain = escape_controls(str(text))
    plain = plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN.sub(r"\\\1", " ".join(plain.split()))


def _pct(value: float) -> str:
    return f"{value:.0%}"


def _runs(indices: Sequence[int]) -> str:
    shown = ", ".join(map(str, indices[:10]))
    return shown + (f" and {len(indices) - 10} more" if len(indices) > 10 else "")


def _properties(parent: ET.Element, pairs: Iterable[tuple[str, object]]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in pairs:
        if value is not None:
            ET.SubElement(props, "property", name=_x(name), value=_x(value))


def _seconds(value: float) -> str:
    """A duration as JUnit's `time`: decimal seconds, no exponent."""
    return f"{max(value, 0.0):.3f}"


def _timestamp(created_at: str) -> str:
    """The store's ISO time (UTC, `Z`) as JUnit's `timestamp`: to the second, no zone
    (Ant's schema allows none; the time is UTC)."""
    return created_at[:19]


def experiment_properties(
    experiment: ExperimentRecord, accounting: Accounting, u: Uncertainty | None = None
) -> list[tuple[str, object]]:
    """The experiment's accounting and figures (with their intervals, given `u`) as
    name-value pairs: JUnit's `<properties>` and the pytest plugin's `record_property`."""
    pairs: list[tuple[str, object]] = [
        ("experiment", experiment.id),
        ("name", experiment.name),
        ("agent", experiment.agent),
        ("model", experiment.model),
        ("k_requested", experiment.k_requested),
        ("fingerprint", experiment.fingerprint),
        ("runs_requested", accounting.runs_requested),
        ("runs_completed", accounting.runs_completed),
        ("runs_counted", accounting.runs_counted),
        ("runs_errored", accounting.runs_errored),
        ("runs_missing", accounting.runs_missing),
    ]
    if not accounting.runs_counted:
        return pairs
    d = accounting.dataset()
    m = d.metrics
    figures = (
        ("pass_rate", m.pass_rate, "pass_at_1"),
        (d.label_at, m.pass_at_j, "pass_at_j"),
        (d.label_hat, m.pass_hat_j, "pass_hat_j"),
    )
    for name, value, key in figures:
        pairs.append((name, f"{value:.6g}"))
        if u is not None and u.dataset is not None:
            interval = getattr(u.dataset, key)
            pairs += [
                (f"{name}.low", f"{interval.low:.6g}"),
                (f"{name}.high", f"{interval.high:.6g}"),
            ]
    return pairs


@dataclass(frozen=True)
class CaseRuns:
    """What a case's test case says of its runs beyond the accounting."""

    seconds: float = 0.0
    """The runs' durations, summed."""
    short: CaseShort | None = None
    """Its failed runs, missed items and runs a limit stopped."""
    errors: tuple[str, ...] = ()
    """`run N: kind: message` of each errored run."""
    kinds: tuple[str, ...] = ()
    """The errored runs' kinds, each once."""


def case_runs(
    accounting: Accounting, runs: Sequence[RunSummary], items: Iterable[ItemStability]
) -> dict[str, CaseRuns]:
    """Per case: the runs' time, what fell short, and the errored runs' kinds and messages."""
    seconds: dict[str, float] = {}
    errors: dict[str, list[str]] = {}
    kinds: dict[str, dict[str, None]] = {}
    for r in runs:
        seconds[r.case_id] = seconds.get(r.case_id, 0.0) + r.duration_s
        if r.status == "errored":
            text = f"run {r.run_index}: {r.error_type}: {r.error_message}"
            errors.setdefault(r.case_id, []).append(text)
            kinds.setdefault(r.case_id, {})[str(r.error_type)] = None
    shorts = case_shorts(accounting, runs, items)
    return {
        c.case: CaseRuns(
            seconds.get(c.case, 0.0),
            shorts.get(c.case),
            tuple(errors.get(c.case, ())),
            tuple(kinds.get(c.case, {})),
        )
        for c in accounting.cases
    }


def _case_testcase(suite: str, c: CaseAccount, runs: CaseRuns) -> tuple[ET.Element, str]:
    """The case's test case and its outcome: passed, failure or error. Its figures are
    in the message and text (Ant's and Jenkins's schemas give a test case no properties)."""
    case = ET.Element("testcase", classname=_x(suite), name=_x(c.case), time=_seconds(runs.seconds))
    failed = c.counted - c.passes
    shortfall = []
    if c.errored:
        shortfall.append(f"errored runs {_runs(c.errored)}")
    if len(c.missing):
        shortfall.append(f"missing runs {_runs(c.missing)}")
    body = _case_body(c, runs)
    if failed:
        message = f"{c.passes}/{c.counted} counted runs passed"
        if runs.short is not None and runs.short.failed_runs:
            message += f": failed runs {_runs(runs.short.failed_runs)}"
        if shortfall:
            message += f" ({'; '.join(shortfall)}: not counted)"
        failure = ET.SubElement(case, "failure", message=_x(message), type="failed runs")
        failure.text = _x(body)
        return case, "failure"
    if shortfall:
        message = f"{'; '.join(shortfall)} of {c.k_requested} requested: no verdict"
        if c.counted:
            message += f" ({c.passes}/{c.counted} counted runs passed)"
        if runs.errors:
            message += f"; {runs.errors[0]}"
        kind = ", ".join(runs.kinds) or "runs not counted"
        error = ET.SubElement(case, "error", message=_x(message), type=_x(kind))
        error.text = _x(body)
        return case, "error"
    return case, "passed"


def _case_body(c: CaseAccount, runs: CaseRuns) -> str:
    """A failure's or error's text: the counts, then every failed run, missed item,
    run a limit stopped, errored run and missing run."""
    lines = [
        f"requested {c.k_requested}, completed {c.completed}, counted {c.counted}, "
        f"passes {c.passes}, errored {len(c.errored)}, missing {len(c.missing)}"
    ]
    short = runs.short
    if short is not None and short.failed_runs:
        lines.append(f"failed runs: {_runs(short.failed_runs)}")
    if short is not None:
        lines += [f"missed {item}: runs {_runs(indices)}" for item, indices in short.missed]
        lines += [f"extra {item}: runs {_runs(indices)}" for item, indices in short.extra]
        if short.limit_runs:
            lines.append(
                f"stopped by a limit (--max-turns, --token-budget), counted: runs "
                f"{_runs(short.limit_runs)}"
            )
    lines += [f"errored {text}" for text in runs.errors]
    if len(c.missing):
        lines.append(f"missing runs (no record): {_runs(c.missing)}")
    return "\n".join(lines) + "\n"


def _suite_element(name: str, package: str, timestamp: str) -> ET.Element:
    """A `<testsuite>` with what Ant's schema requires besides its counts and time."""
    return ET.Element(
        "testsuite",
        name=_x(name).strip() or "passhat",
        package=_x(package).strip() or "passhat",
        id="0",
        timestamp=timestamp,
        hostname="localhost",
        skipped="0",
    )


def _document(suite: ET.Element, outcomes: Sequence[str]) -> str:
    """The suite, its counts set and its output elements closed, in a `<testsuites>`
    (with no attribute: Ant's schema declares none; the suite carries the counts)."""
    suite.set("tests", str(len(outcomes)))
    suite.set("failures", str(outcomes.count("failure")))
    suite.set("errors", str(outcomes.count("error")))
    ET.SubElement(suite, "system-out")
    ET.SubElement(suite, "system-err")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def junit_xml(
    experiment: ExperimentRecord,
    accounting: Accounting,
    runs: Sequence[RunSummary] = (),
    items: Iterable[ItemStability] = (),
    u: Uncertainty | None = None,
) -> str:
    """The experiment as JUnit XML, valid under Ant's and Jenkins's schemas: a test case
    per case (`time`: its runs' durations summed) with what fell short in its
    `<failure>` or `<error>`, and the accounting and figures as the suite's properties."""
    ref = experiment.name or experiment.id
    suite = _suite_element(
        f"{experiment.suite_name} · {ref}", experiment.suite_name, _timestamp(experiment.created_at)
    )
    _properties(suite, experiment_properties(experiment, accounting, u))
    facts = case_runs(accounting, runs, items)
    outcomes = []
    total = 0.0
    for c in accounting.cases:
        case, outcome = _case_testcase(experiment.suite_name, c, facts[c.case])
        suite.append(case)
        outcomes.append(outcome)
        total += facts[c.case].seconds
    suite.set("time", _seconds(total))
    return _document(suite, outcomes)


def _interval(u: Uncertainty | None, key: str) -> str:
    if u is None or u.dataset is None:
        return ""
    i = getattr(u.dataset, key)
    return f" [{_pct(i.low)}–{_pct(i.high)}]"


def summary_markdown(
    experiment: ExperimentRecord, accounting: Accounting, u: Uncertainty | None = None
) -> str:
    """The experiment as Markdown: the accounting, the figures (with their intervals,
    given `u`), and every case short of a pass."""
    a = accounting
    ref = experiment.name or experiment.id
    lines = [
        f"### passhat · {md(experiment.suite_name)} · experiment {md(ref)}",
        "",
        f"agent {md(experiment.agent)} · model {md(experiment.model or '–')} · "
        f"requested k = {experiment.k_requested}",
        "",
        "| runs requested | completed | counted | errored | missing |",
        "|---:|---:|---:|---:|---:|",
        f"| {a.runs_requested} | {a.runs_completed} | {a.runs_counted} | {a.runs_errored} "
        f"| {a.runs_missing} |",
        "",
    ]
    if a.runs_counted == 0:
        lines += ["**No run was counted: pass@k cannot be computed.**", ""]
    else:
        d = a.dataset()
        m = d.metrics
        lines += [
            f"| cases | pass rate | {md(d.label_at)} | {md(d.label_hat)} |",
            "|---:|---:|---:|---:|",
            f"| {m.cases} | {m.passes}/{m.runs} ({_pct(m.pass_at_1)})"
            f"{_interval(u, 'pass_at_1')} | {_pct(m.pass_at_j)}{_interval(u, 'pass_at_j')} "
            f"| {_pct(m.pass_hat_j)}{_interval(u, 'pass_hat_j')} |",
            "",
        ]
        if u is not None and u.dataset is not None:
            lines += [f"Intervals at {u.confidence:.0%}, over cases.", ""]
            line = loss_line(u)
            if line is not None:
                lines += [f"**{md(line)}**", ""]
    short = [c for c in a.cases if c.passes < c.k_requested]
    if short:
        lines += [
            "| case | passes / counted | errored runs | missing runs |",
            "|---|---:|---|---|",
        ]
        for c in short[:50]:
            lines.append(
                f"| {md(c.case)} | {c.passes}/{c.counted} | {_runs(c.errored) or '–'} "
                f"| {_runs(c.missing) or '–'} |"
            )
        if len(short) > 50:
            lines.append(f"| … {len(short) - 50} more cases | | | |")
        lines.append("")
    else:
        lines += ["Every requested run of every case passed.", ""]
    return "\n".join(lines) + "\n"  # a blank line before the next summary appended


# --- a comparison


def comparison_junit(
    result: Comparison, source_a: str, source_b: str, timestamp: str | None = None
) -> str:
    """A comparison as JUnit XML: a test case per paired case, one for the verdict; each
    case's counts and p- and q-values as a suite property `case ID`."""
    suite = _suite_element(f"compare {source_a} -> {source_b}", "compare", timestamp or _now())
    pairs: list[tuple[str, object]] = [
        ("a", source_a),
        ("b", source_b),
        ("cases_paired", len(result.cases)),
        ("verdict", result.verdict.outcome),
        ("metric", result.verdict.metric),
    ]
    pairs += [
        (
            f"case {c.case}",
            f"A {c.passes_a}/{c.runs_a}, B {c.passes_b}/{c.runs_b}, p {c.p_value:.4g}, "
            f"q {c.q_value:.4g}",
        )
        for c in result.cases
    ]
    _properties(suite, pairs)
    outcomes = []
    for c in result.cases:
        case = ET.SubElement(suite, "testcase", classname="compare", name=_x(c.case), time="0")
        if c.outcome == "worse":
            message = (
                f"B passed {c.passes_b}/{c.runs_b}, A {c.passes_a}/{c.runs_a} (q = {c.q_value:.3g})"
            )
            ET.SubElement(case, "failure", message=_x(message), type="worse")
            outcomes.append("failure")
        else:
            outcomes.append("passed")
    verdict = ET.SubElement(suite, "testcase", classname="compare", name="verdict", time="0")
    if result.verdict.outcome == "worse":
        ET.SubElement(verdict, "failure", message=_x(result.verdict.text), type="worse")
        outcomes.append("failure")
    else:
        outcomes.append("passed")
    suite.set("time", "0")
    return _document(suite, outcomes)


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _difference_row(d: Difference) -> str:
    return (
        f"| {md(d.label)} | {_pct(d.a)} | {_pct(d.b)} | {d.difference * 100:+.1f} pts "
        f"| [{d.low * 100:+.1f}, {d.high * 100:+.1f}] |"
    )


def comparison_markdown(result: Comparison, source_a: str, source_b: str) -> str:
    """A comparison as Markdown: the verdict, the three differences, the cases that moved."""
    lines = [
        f"### passhat compare · A: {md(source_a)} · B: {md(source_b)}",
        "",
        f"**{md(result.verdict.outcome)}**: {md(result.verdict.text)}",
        "",
        "| figure | A | B | B − A | interval |",
        "|---|---:|---:|---:|---|",
        _difference_row(result.pass_at_1),
        _difference_row(result.pass_at_j),
        _difference_row(result.pass_hat_j),
        "",
        f"{len(result.cases)} paired cases.",
    ]
    moved = [c for c in result.cases if c.outcome != "none"]
    if moved:
        lines += ["", "| case | A | B | q |", "|---|---:|---:|---:|"]
        for c in moved:
            lines.append(
                f"| {md(c.case)} | {c.passes_a}/{c.runs_a} | {c.passes_b}/{c.runs_b} "
                f"| {c.q_value:.3g} |"
            )
    for label, names in (("only in A", result.only_a), ("only in B", result.only_b)):
        if names:
            lines += ["", f"{label}: {md(', '.join(names[:20]))}"]
    return "\n".join(lines) + "\n\n"
