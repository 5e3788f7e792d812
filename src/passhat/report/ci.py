"""CI outputs: a JUnit XML file and a Markdown summary (for $GITHUB_STEP_SUMMARY).

Pure functions from an experiment's record and accounting (and its intervals), or
from a comparison, to text; the CLI writes the files (`--junit-xml`, `--summary`).

JUnit: one test case per case of the experiment, its counts as properties. A case
passes when every requested run passed (pass^k at the requested k); a counted run
that failed makes a `<failure>`; errored or missing runs with no failure make an
`<error>`: a run with no verdict is never reported as a failure, nor as a pass.
For a comparison: one test case per paired case (a `<failure>` when B is worse on
it, after the per-case correction) and one for the verdict (a `<failure>` when B
is worse).

Model output and ids are data: XML is escaped by ElementTree (and characters XML
cannot hold are dropped); Markdown cells are escaped, HTML included.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

from passhat.accounting import Accounting, CaseAccount
from passhat.records import ExperimentRecord
from passhat.report.loss import loss_line
from passhat.stats import Comparison, Difference, Uncertainty

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
"""What changes the meaning of text inside a table cell or a line (HTML is escaped apart)."""


def _x(text: object) -> str:
    """Text XML 1.0 can hold (ElementTree escapes the rest)."""
    return _NOT_XML.sub("", str(text))


def md(text: object) -> str:
    """Text safe in a Markdown table cell: markup characters escaped, no HTML, one line."""
    plain = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
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
            ET.SubElement(props, "property", name=name, value=_x(value))


def _case_testcase(suite: str, c: CaseAccount) -> tuple[ET.Element, str]:
    """The case's test case and its outcome: passed, failure or error."""
    case = ET.Element("testcase", classname=_x(suite), name=_x(c.case))
    m = c.metrics
    _properties(
        case,
        [
            ("requested", c.k_requested),
            ("completed", c.completed),
            ("counted", c.counted),
            ("passes", c.passes),
            ("errored", len(c.errored)),
            ("missing", len(c.missing)),
            ("pass_rate", None if m is None else f"{m.pass_rate:.6g}"),
            (f"pass@{c.counted}", None if m is None else str(m.pass_at_k).lower()),
            (f"pass^{c.counted}", None if m is None else str(m.pass_hat_k).lower()),
        ],
    )
    failed = c.counted - c.passes
    shortfall = []
    if c.errored:
        shortfall.append(f"errored runs {_runs(c.errored)}")
    if len(c.missing):
        shortfall.append(f"missing runs {_runs(c.missing)}")
    if failed:
        message = f"{c.passes}/{c.counted} counted runs passed"
        if shortfall:
            message += f" ({'; '.join(shortfall)}: not counted)"
        ET.SubElement(case, "failure", message=_x(message), type="failed runs")
        return case, "failure"
    if shortfall:
        message = f"{'; '.join(shortfall)} of {c.k_requested} requested: no verdict"
        if c.counted:
            message += f" ({c.passes}/{c.counted} counted runs passed)"
        ET.SubElement(case, "error", message=_x(message), type="runs not counted")
        return case, "error"
    return case, "passed"


def _document(suite: ET.Element, outcomes: Sequence[str], name: str) -> str:
    tests = str(len(outcomes))
    failures = str(outcomes.count("failure"))
    errors = str(outcomes.count("error"))
    for key, value in (("tests", tests), ("failures", failures), ("errors", errors)):
        suite.set(key, value)
    root = ET.Element("testsuites", name=_x(name), tests=tests, failures=failures, errors=errors)
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def junit_xml(experiment: ExperimentRecord, accounting: Accounting) -> str:
    """The experiment as JUnit XML: a test case per case, counts as properties."""
    ref = experiment.name or experiment.id
    suite = ET.Element("testsuite", name=_x(f"{experiment.suite_name} · {ref}"))
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
    if accounting.runs_counted:
        d = accounting.dataset()
        m = d.metrics
        pairs += [
            ("pass_rate", f"{m.pass_at_1:.6g}"),
            (d.label_at, f"{m.pass_at_j:.6g}"),
            (d.label_hat, f"{m.pass_hat_j:.6g}"),
        ]
    _properties(suite, pairs)
    outcomes = []
    for c in accounting.cases:
        case, outcome = _case_testcase(experiment.suite_name, c)
        suite.append(case)
        outcomes.append(outcome)
    return _document(suite, outcomes, "passhat")


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


def comparison_junit(result: Comparison, source_a: str, source_b: str) -> str:
    """A comparison as JUnit XML: a test case per paired case, one for the verdict."""
    suite = ET.Element("testsuite", name=_x(f"compare {source_a} -> {source_b}"))
    _properties(
        suite,
        [
            ("a", source_a),
            ("b", source_b),
            ("cases_paired", len(result.cases)),
            ("verdict", result.verdict.outcome),
            ("metric", result.verdict.metric),
        ],
    )
    outcomes = []
    for c in result.cases:
        case = ET.SubElement(suite, "testcase", classname="compare", name=_x(c.case))
        _properties(
            case,
            [
                ("a_counted", c.runs_a),
                ("a_passes", c.passes_a),
                ("b_counted", c.runs_b),
                ("b_passes", c.passes_b),
                ("p_value", f"{c.p_value:.4g}"),
                ("q_value", f"{c.q_value:.4g}"),
            ],
        )
        if c.outcome == "worse":
            message = (
                f"B passed {c.passes_b}/{c.runs_b}, A {c.passes_a}/{c.runs_a} (q = {c.q_value:.3g})"
            )
            ET.SubElement(case, "failure", message=_x(message), type="worse")
            outcomes.append("failure")
        else:
            outcomes.append("passed")
    verdict = ET.SubElement(suite, "testcase", classname="compare", name="verdict")
    if result.verdict.outcome == "worse":
        ET.SubElement(verdict, "failure", message=_x(result.verdict.text), type="worse")
        outcomes.append("failure")
    else:
        outcomes.append("passed")
    return _document(suite, outcomes, "passhat compare")


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
