"""Rule-based acceptance of a card, after the team's writing guide.

Registered in suite.yaml as `custom: rules.py:card_follows_guide`; passhat calls
`card_follows_guide(final_state, goal, **params)` and keeps the returned
violations with the run, so a report says why a card was rejected.

Checked: one card; title length and no full stop; the required sections, in
order, each with text; checklist size and item length; exactly one type label;
the list the goal names. Not checked: that the title starts with a verb (that
needs a reader, not a rule). The labels themselves are compared with the goal's
by the suite's exact_set scorer.
"""

from __future__ import annotations

from typing import Any


def card_follows_guide(
    final_state: dict[str, Any],
    goal: dict[str, Any],
    *,
    max_title: int = 60,
    sections: list[str] | None = None,
    checklist_min: int = 2,
    checklist_max: int = 6,
    max_item: int = 80,
    type_labels: list[str] | None = None,
) -> dict[str, Any]:
    """Accept the run's one card, or list every rule it breaks."""
    cards = final_state.get("cards") or []
    if len(cards) != 1:
        return {"passed": False, "violations": [f"expected exactly one card, found {len(cards)}"]}
    card = cards[0]
    violations = [
        *_title(card["title"], max_title),
        *_sections(card["description"], sections or ["## Why", "## What", "## Done when"]),
        *_checklist(card["checklist"], checklist_min, checklist_max, max_item),
        *_type_label(card["labels"], type_labels or ["bug", "feature", "chore"]),
    ]
    wanted = goal["cards"][0]["list"]
    if card["list"] != wanted:
        violations.append(f"list: the card is in {card['list']!r}; the guide puts it in {wanted!r}")
    return {"passed": not violations, "violations": violations}


def _title(title: str, limit: int) -> list[str]:
    out = []
    if len(title) > limit:
        out.append(f"title: {len(title)} characters; at most {limit}")
    if title.rstrip().endswith("."):
        out.append("title: ends with a full stop")
    return out


def _sections(description: str, headings: list[str]) -> list[str]:
    lines = [line.strip() for line in description.splitlines()]
    found = [lines.index(h) if h in lines else -1 for h in headings]
    out = [
        f"description: no {h!r} section" for h, at in zip(headings, found, strict=True) if at < 0
    ]
    present = [at for at in found if at >= 0]
    if present != sorted(present):
        out.append(f"description: sections out of order; use {', '.join(headings)}")
    for heading, at in zip(headings, found, strict=True):
        if at < 0:
            continue
        later = [i for i in present if i > at]
        body = lines[at + 1 : min(later) if later else len(lines)]
        if not any(body):
            out.append(f"description: the {heading!r} section is empty")
    return out


def _checklist(items: list[str], low: int, high: int, max_item: int) -> list[str]:
    out = []
    if not low <= len(items) <= high:
        out.append(f"checklist: {len(items)} items; write {low} to {high}")
    out += [f"checklist[{i}]: empty" for i, item in enumerate(items) if not item.strip()]
    out += [
        f"checklist[{i}]: {len(item)} characters; at most {max_item}"
        for i, item in enumerate(items)
        if len(item) > max_item
    ]
    return out


def _type_label(labels: list[str], types: list[str]) -> list[str]:
    found = [label for label in labels if label in types]
    if len(found) == 1:
        return []
    return [f"labels: exactly one of {', '.join(types)} (found {len(found)})"]
