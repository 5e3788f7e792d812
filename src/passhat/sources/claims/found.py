"""What the claim reader finds: a `Claim` (a run count, its file and line, its
sentence and the rule that read it), a `SetAside` (a number read and set aside, with the
rule why) and a `Reading` (both, for one text, with notes on what the bounds left out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from passhat.sources.claims.numbers import MAX_CLAIM


@dataclass(frozen=True)
class Claim:
    """A run count a write-up claims."""

    k: int
    """The count; MAX_CLAIM + 1 stands for any count above MAX_CLAIM (see `too_large`)."""
    source: str
    """File and line, e.g. `REPORT.md:3`, or `--claimed`."""
    quote: str
    """The sentence that claims it ('' for --claimed)."""
    at_least: bool = False
    """True for a figure that needs k runs (pass^k, pass@k) rather than a count of them."""
    scope: str | None = None
    """The configuration a table row claims it for (None: every configuration)."""
    written: str = ""
    """The number as written, e.g. `five` or `100000000`."""
    rule: str = ""
    """The rule of the grammar that read it, e.g. `count per scope` (docs/audit.md)."""
    attached: str = ""
    """Why it is attached to the folder's own results (claims/attached.py), e.g. `told as
    done: 'we'`; '' for --claimed and before the reader decided."""

    @property
    def too_large(self) -> bool:
        return self.k > MAX_CLAIM

    def shown_number(self) -> str:
        """The number as written, shortened when it is long (a 5,000-digit claim)."""
        text = self.written or str(self.k)
        digits = sum(c.isdigit() for c in text)
        return f"a {digits:,}-digit number" if len(text) > 24 else text

    def describe(self) -> str:
        """E.g. `3 runs per configuration`, `pass^5 (needs 5 runs per configuration)`."""
        count = f"{self.k} run{'s' if self.k != 1 else ''}"
        where = f"of {self.scope}" if self.scope else "per configuration"
        if self.at_least:
            return f"a figure over {count} {where}"
        return f"{count} {where}"


@dataclass(frozen=True)
class SetAside:
    """A number the grammar read as a candidate and set aside, with the rule why."""

    source: str
    """File and line."""
    quote: str
    """The sentence."""
    rule: str
    """Why it is no claim, e.g. `a limit, not a count of runs`."""
    written: str = ""


@dataclass
class Reading:
    """What one text claims, and what it seemed to claim but does not."""

    claims: list[Claim] = field(default_factory=list)
    set_aside: list[SetAside] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the bounds left unread (MAX_CANDIDATES)."""
