"""A gate on an experiment's figures: `--require "pass^k>=0.8"`, `require=[...]`.

One rule object for every shell: `passhat run/resume/report --require`, the pytest
plugin's `require=` and `passhat.evaluate(require=...)` all parse the same text into
a `Requirement` and judge it with `judge`, so a threshold means the same everywhere.

A requirement names a figure, optionally the lower end of its interval, a comparison
and a threshold (a fraction, or a percentage):

    rate>=0.8            the headline pass rate (aliases: pass_rate, pass@1)
    pass@k>=0.9          the dataset pass@j, j the counted runs every case reaches
    pass^k>=0.4          the dataset pass^j (alias: pass_hat_k)
    pass^k.low>=0.3      the lower end of pass^j's interval, not the estimate
    rate>80%             strictly above

Nothing counted is never a pass: every requirement falls short. A requirement on an
interval's lower end falls short when no interval can be made (fewer than 2 cases
with a counted run, but for the pass rate of a single case: its Wilson interval).
A shortfall names the figure, its value and interval, and the cases behind it: their
failed runs by index and the goal items their runs missed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from passhat.errors import InputError
from passhat.limits import limit_runs
from passhat.plain import did_you_mean

if TYPE_CHECKING:
    from passhat.accounting import Accounting, CaseAccount
    from passhat.analysis import ItemStability
    from passhat.records import ReportRun
    from passhat.stats import Uncertainty

Figure = Literal["rate", "pass@k", "pass^k"]

FIGURES: dict[str, Figure] = {
    "rate": "rate",
    "pass_rate": "rate",
    "pass@1": "rate",
    "pass@k": "pass@k",
    "pass_at_k": "pass@k",
    "pass^k": "pass^k",
    "pass_hat_k": "pass^k",
}
"""Names a requirement may give a figure, and the figure each means."""

_SHAPE = re.compile(
    r"^\s*(?P<figure>[A-Za-z_@^0-9]+?)(?P<low>\.low)?\s*(?P<op>>=|>)\s*"
    r"(?P<value>[0-9]*\.?[0-9]+)\s*(?P<pct>%)?\s*$"
)
EXAMPLE = 'e.g. --require "pass^k>=0.8" or --require "rate.low>=0.5"'
CASES_SHOWN = 10
"""Cases a shortfall's message lists (the rest are counted)."""


@dataclass(frozen=True)
class Requirement:
    """A threshold one figure of an experiment must reach."""

    figure: Figure
    """`rate` (the headline pass rate), `pass@k` or `pass^k` (at the j every case reaches)."""
    threshold: float
    """A fraction, 0 to 1."""
    above: bool = False
    """Strictly above the threshold (`>`), not at least it (`>=`)."""
    low: bool = False
    """Judge the lower end of the figure's interval, not the estimate."""

    @classmethod
    def parse(cls, text: str | Requirement) -> Requirement:
        """`pass^k>=0.8`, `rate.low>=50%`...; bad text raises `InputError` naming the fix."""
        if isinstance(text, Requirement):
            return text
        if not isinstance(text, str):
            raise InputError(
                f"a requirement is text like 'pass^k>=0.8', not {type(text).__name__} "
                f"{text!r}; {EXAMPLE}"
            )
        found = _SHAPE.match(text)
        if found is None:
            raise InputError(
                f"requirement {text!r} is not FIGURE>=VALUE or FIGURE.low>=VALUE; {EXAMPLE}"
            )
        name = found["figure"].lower()
        if name not in FIGURES:
            raise InputError(
                f"requirement {text!r}: no figure {found['figure']!r}"
                f"{did_you_mean(name, list(FIGURES))}; give one of rate, pass@k, pass^k"
            )
        value = float(found["value"]) / (100 if found["pct"] else 1)
        if not 0 <= value <= 1:
            raise InputError(
                f"requirement {text!r}: {found['value']}{found['pct'] or ''} is not a share; "
                "give 0 to 1 (0.8) or a percentage (80%)"
            )
        return cls(FIGURES[name], value, found["op"] == ">", bool(found["low"]))

    def __str__(self) -> str:
        return f"{self.figure}{'.low' if self.low else ''}{'>' if self.above else '>='}{self.threshold:g}"

    def met_by(self, value: float) -> bool:
        return value > self.threshold if self.above else value >= self.threshold


def requirements(texts: Iterable[str | Requirement] | str | None) -> tuple[Requirement, ...]:
    """Requirements from text (checked before anything runs); one string is one requirement."""
    if texts is None:
        return ()
    if isinstance(texts, str | Requirement):
        texts = [texts]
    return tuple(Requirement.parse(t) for t in texts)


@dataclass(frozen=True)
class CaseShort:
    """A case behind a shortfall: what its runs did."""

    case: str
    passes: int
    counted: int
    failed_runs: tuple[int, ...]
    """Indices of its counted runs that failed."""
    missed: tuple[tuple[str, tuple[int, ...]], ...]
    """Goal items some run missed, each with the runs that missed it."""
    limit_runs: tuple[int, ...] = ()
    """Runs a limit (--max-turns, --token-budget) stopped."""
    extra: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Items outside the goal some run produced, each with the runs that produced it."""

    def text(self) -> str:
        parts = [f"{self.case}: {self.passes}/{self.counted} passed"]
        if self.failed_runs:
            parts.append(f"failed runs {_indices(self.failed_runs)}")
        if self.limit_runs:
            parts.append(f"stopped by a limit: runs {_indices(self.limit_runs)}")
        if self.missed:
            shown = "; ".join(f"{item} (runs {_indices(runs)})" for item, runs in self.missed[:5])
            more = f"; {len(self.missed) - 5} more" if len(self.missed) > 5 else ""
            parts.append(f"missed {shown}{more}")
        if self.extra:
            shown = "; ".join(f"{item} (runs {_indices(runs)})" for item, runs in self.extra[:5])
            more = f"; {len(self.extra) - 5} more" if len(self.extra) > 5 else ""
            parts.append(f"extra {shown}{more}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Shortfall:
    """A requirement the experiment does not meet."""

    requirement: Requirement
    label: str
    """The figure as counted: `pass rate`, `pass@3`, `pass^3`."""
    value: float | None
    """What was compared: the estimate or the interval's lower end (None: no figure)."""
    estimate: float | None
    interval: tuple[float, float] | None
    why: str | None
    """Why there is no value (nothing counted, no interval)."""
    cases: tuple[CaseShort, ...]

    def text(self) -> str:
        head = f"{self.requirement} not met: "
        if self.value is None or self.estimate is None:
            head += f"{self.label}: {self.why}"
        else:
            what = f"{self.label} {self.estimate:.1%}"
            if self.interval is not None:
                what += f" [{self.interval[0]:.1%}–{self.interval[1]:.1%}]"
            if self.requirement.low:
                what += f", lower end {self.value:.1%}"
            head += what
        lines = [head]
        lines += [f"  {c.text()}" for c in self.cases[:CASES_SHOWN]]
        if len(self.cases) > CASES_SHOWN:
            lines.append(f"  and {len(self.cases) - CASES_SHOWN} more cases")
        return "\n".join(lines)


@dataclass(frozen=True)
class Gate:
    """Every requirement judged: `passed` when none falls short."""

    requirements: tuple[Requirement, ...]
    shortfalls: tuple[Shortfall, ...]

    @property
    def passed(self) -> bool:
        return not self.shortfalls

    def text(self) -> str:
        if not self.requirements:
            return "no requirement"
        if self.passed:
            return "requirements met: " + ", ".join(map(str, self.requirements))
        return "\n".join(s.text() for s in self.shortfalls)


def judge(
    require: Sequence[Requirement],
    accounting: Accounting,
    uncertainty: Uncertainty | None,
    runs: Sequence[ReportRun] = (),
    items: Iterable[ItemStability] = (),
) -> Gate:
    """Judge each requirement on the experiment's figures; `runs` (their statuses) and
    `items` (item stability) name what the cases behind a shortfall did."""
    if not require:
        return Gate((), ())
    cases = case_shorts(accounting, runs, items)
    shortfalls = []
    for requirement in require:
        found = _figure(requirement, accounting, uncertainty)
        if found.value is not None and requirement.met_by(found.value):
            continue
        behind = tuple(cases[c.case] for c in accounting.cases if _behind(requirement.figure, c))
        shortfalls.append(
            Shortfall(
                requirement,
                found.label,
                found.value,
                found.estimate,
                found.interval,
                found.why,
                behind,
            )
        )
    return Gate(tuple(require), tuple(shortfalls))


def case_shorts(
    accounting: Accounting, runs: Sequence[ReportRun], items: Iterable[ItemStability]
) -> dict[str, CaseShort]:
    """Every case's passes, failed runs, runs a limit stopped and missed goal items."""
    failed: dict[str, list[int]] = defaultdict(list)
    for r in runs:
        if r.status == "failed":
            failed[r.case_id].append(r.run_index)
    limits = limit_runs(runs)
    missed: dict[str, list[tuple[str, tuple[int, ...]]]] = defaultdict(list)
    extra: dict[str, list[tuple[str, tuple[int, ...]]]] = defaultdict(list)
    for s in items:
        if s.expected and s.misses:
            missed[s.case].append((s.item, s.misses))
        elif not s.expected and s.hits:
            extra[s.case].append((s.item, s.hits))
    return {
        c.case: CaseShort(
            c.case,
            c.passes,
            c.counted,
            tuple(failed.get(c.case, ())),
            tuple(missed.get(c.case, ())),
            tuple(limits.get(c.case, ())),
            tuple(extra.get(c.case, ())),
        )
        for c in accounting.cases
    }


def _behind(figure: Figure, c: CaseAccount) -> bool:
    """The case pulls the figure down: a failed run (rate, pass^k), never a pass (pass@k),
    or nothing counted at all."""
    if c.counted == 0:
        return True
    if figure == "pass@k":
        return c.passes == 0
    return c.passes < c.counted


@dataclass(frozen=True)
class _Found:
    label: str
    estimate: float | None
    interval: tuple[float, float] | None
    value: float | None
    why: str | None


def _figure(
    requirement: Requirement, accounting: Accounting, uncertainty: Uncertainty | None
) -> _Found:
    """The figure a requirement names: its label, estimate, interval and compared value."""
    if accounting.runs_counted == 0:
        return _Found("pass rate", None, None, None, "no run was counted")
    d = accounting.dataset()
    m = d.metrics
    label, estimate, key = {
        "rate": ("pass rate", m.pass_rate, "pass_at_1"),
        "pass@k": (d.label_at, m.pass_at_j, "pass_at_j"),
        "pass^k": (d.label_hat, m.pass_hat_j, "pass_hat_j"),
    }[requirement.figure]
    interval: tuple[float, float] | None = None
    if uncertainty is not None and uncertainty.dataset is not None:
        i = getattr(uncertainty.dataset, key)
        interval = (i.low, i.high)
    elif uncertainty is not None and requirement.figure == "rate" and len(uncertainty.cases) == 1:
        one = uncertainty.cases[0]
        interval = (one.low, one.high)
    if not requirement.low:
        return _Found(label, estimate, interval, estimate, None)
    if interval is None:
        why = f"{estimate:.1%} has no interval (fewer than 2 cases with a counted run)"
        return _Found(label, estimate, None, None, why)
    return _Found(label, estimate, interval, interval[0], None)


def _indices(indices: Sequence[int]) -> str:
    shown = ", ".join(map(str, indices[:10]))
    return shown + (f" and {len(indices) - 10} more" if len(indices) > 10 else "")
