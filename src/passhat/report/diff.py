"""Two runs side by side (`passhat diff`), the divergence tree and the item evidence of a
case: as rich renderables and as JSON-ready data.

Everything here came from a case file, a model or a tool: it enters as `Text`, never
as markup, and the console escapes control characters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.text import Text
from rich.tree import Tree

from passhat.divergence import (
    Branch,
    CallPair,
    ItemEvidence,
    RunDiff,
    ToolCall,
    Turn,
    Write,
)
from passhat.records import RunRecord
from passhat.report.console import one_line
from passhat.report.i18n import t
from passhat.report.table import Fitted, Table, titled_table
from passhat.report.why import CaseWhy

SHOWN_CHARS = 240
"""Characters of a message or a call's arguments shown in the terminal (--json has all)."""


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# ------------------------------------------------------------------------- pair diff


def _message_text(turn: Turn | None, transcript: Sequence[Mapping[str, Any]]) -> Text:
    if turn is None:
        return Text("(no such turn)", style="dim")
    out = Text()
    for n, i in enumerate(turn.messages):
        message = transcript[i]
        if n:
            out.append("\n")
        role = str(message.get("role"))
        if message.get("name"):
            role += f" {message['name']}"
        out.append(f"{role}: ", style="bold")
        content = message.get("content")
        out.append(clip(content if isinstance(content, str) else _json(content)))
        for call in turn.shape[n].get("tool_calls", ()):
            out.append("\n→ ", style="cyan")
            out.append(clip(f"{call['name']}({_json(call['arguments'])})"))
    return out


def _call_text(call: ToolCall | None) -> Text:
    if call is None:
        return Text("–", style="dim")
    out = Text(f"#{call.number} ")
    if call.turn is not None:
        out.append(f"turn {call.turn} ", style="dim")
    out.append(clip(f"{call.tool}({_json(call.arguments)})"))
    if call.error:
        out.append(" → error: ", style="red").append(clip(str(call.error), 120))
    elif call.recorded:
        out.append(" → ", style="dim").append(clip(_json(call.result), 120))
    return out


def _side(run: RunRecord, name: str) -> str:
    return f"{name} ({run.status})"


def diff_table(d: RunDiff, name_a: str, name_b: str) -> Group:
    """Final state, the first divergence, the turns and the tool calls of two runs."""
    parts: list[Any] = []
    head = Text.assemble(
        ("diff · ", "bold"),
        (d.a.case_id, "bold"),
        f" · {_side(d.a, name_a)}  ↔  {_side(d.b, name_b)}",
    )
    parts.append(head)
    for r, name in ((d.a, name_a), (d.b, name_b)):
        if r.status == "errored":
            parts.append(Text(f"{name} errored: {r.error_type}: {r.error_message}", style="red"))
    parts.append(Text())
    parts.append(_state_part(d, name_a, name_b))
    parts.append(_output_part(d, name_a, name_b))
    parts.append(Text())
    parts.append(divergence_line(d, name_a, name_b))
    if d.divergence:
        for row in d.divergence[:10]:
            line = Text(f"  at {row['path']}: ", style="dim")
            line.append(f"{name_a} ").append(_shown(row, "a"))
            line.append(f"  ·  {name_b} ").append(_shown(row, "b"))
            parts.append(line)
    if d.turns and not d.no_transcript:
        parts.append(_turns_table(d, name_a, name_b))
    parts.append(_calls_table(d.calls, name_a, name_b))
    return Group(*parts)


def _shown(row: Mapping[str, Any], side: str) -> Text:
    if side not in row:
        return Text("(nothing)", style="dim")
    return Text(clip(_json(row[side]), 160))


def call_words(call: ToolCall | None, limit: int = 160) -> str:
    """`book_room({"room": "R2"}) → error: R2 is taken`; `(no such call)`."""
    if call is None:
        return "(no such call: it ended)"
    text = clip(f"{call.tool}({_json(call.arguments)})", limit)
    if call.error:
        return f"{text} → error: {clip(str(call.error), limit)}"
    if call.recorded:
        return f"{text} → {clip(_json(call.result), limit)}"
    return text


def divergence_line(d: RunDiff, name_a: str, name_b: str) -> Text:
    """Where the runs part, on the basis they were compared on, and how they were graded."""
    line = _parting_line(d, name_a, name_b)
    if d.graded_differently:
        scorers = ", ".join(d.scorers) or "the verdict"
        line.append(
            f"\ngraded differently: the same {d.basis}, output and final state, yet "
            f"{name_a} {d.a.status} and {name_b} {d.b.status} ({scorers} differed: "
            "a nondeterministic scorer or judge)",
            style="bold magenta",
        )
    return line


def _parting_line(d: RunDiff, name_a: str, name_b: str) -> Text:
    verdicts = f" ({name_a} {d.a.status}, {name_b} {d.b.status})"
    if d.basis == "outputs":
        missing = " and ".join(name_a if s == "a" else name_b for s in d.no_transcript)
        return Text(
            f"transcripts: {missing} hold no transcript: nothing to align; neither made a "
            f"tool call, so outputs and final states are compared{verdicts}",
            style="yellow",
        )
    if d.basis == "tool calls":
        missing = " and ".join(name_a if s == "a" else name_b for s in d.no_transcript)
        head = f"tool calls ({missing} hold no transcript, so calls are compared): "
        if d.parted_at is None:
            n = sum(1 for p in d.calls if p.a is not None)
            return Text(head + f"the same, call by call ({n} calls){verdicts}", style="green")
        ca, cb = d.first_calls
        return Text.assemble(
            (head + "first diverge at ", "bold"),
            (f"call #{d.parted_at}", "bold yellow"),
            f"{verdicts}: {name_a} {call_words(ca)}  ·  {name_b} {call_words(cb)}",
        )
    if d.diverged_at is None:
        return Text(
            f"transcripts: the same, turn by turn ({len(d.turns)} turns){verdicts}", style="green"
        )
    pair = d.turns[d.diverged_at]
    what = "differs"
    if pair.a is None or pair.b is None:
        ended = name_a if pair.a is None else name_b
        what = f"{ended} has no turn {d.diverged_at} (it ended at turn {d.diverged_at - 1})"
    elif d.diverged_at == 0:
        what = "the input the model was sent differs"
    else:
        what = _what_differs(pair.a, pair.b)
    return Text.assemble(
        ("transcripts: first diverge at ", "bold"),
        (f"turn {d.diverged_at}", "bold yellow"),
        f": {what}{verdicts}",
    )


def _what_differs(a: Turn, b: Turn) -> str:
    ma, mb = a.shape[0], b.shape[0]
    if canonical(ma.get("content")) != canonical(mb.get("content")):
        return "the model's message differs"
    if canonical(ma.get("tool_calls")) != canonical(mb.get("tool_calls")):
        return "the model's tool calls differ"
    return "the tool results differ"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _state_part(d: RunDiff, name_a: str, name_b: str) -> Any:
    rows: list[Any] = []
    for items in d.items:
        table = titled_table(Text.assemble("final state · ", (items.scorer, "bold")))
        table.add_column("items")
        table.add_column("")
        expected = set(items.expected)

        def names(xs: Sequence[str], expected: set[str] = expected) -> Text:
            out = Text()
            for n, x in enumerate(xs):
                if n:
                    out.append(", ")
                out.append(one_line(x), style="" if x in expected else "magenta")
                if x not in expected:
                    out.append(" (extra)", style="magenta")
            return out if xs else Text("–", style="dim")

        table.add_row(f"only in {name_a}", names(items.only_a))
        table.add_row(f"only in {name_b}", names(items.only_b))
        table.add_row("in both", names(items.both))
        rows.append(table)
    if d.state:
        title = "final state · other differences"
        rows.append(_paths_table(title, d.state, name_a, name_b, _json, 160))
    elif not d.items:
        rows.append(Text("final state: the same", style="green"))
    elif d.same_state:
        rows.append(Text("final state: the same items, nothing else differs", style="green"))
    return Group(*rows)


def _output_part(d: RunDiff, name_a: str, name_b: str) -> Any:
    if not d.output:
        same = d.a.output is not None or d.b.output is not None
        return Text("output: the same" if same else "output: none in either run", style="dim")
    return _paths_table("output · where it differs", d.output, name_a, name_b, _shown_value, 400)


def _paths_table(
    title: str,
    rows: Sequence[Mapping[str, Any]],
    name_a: str,
    name_b: str,
    shown: Callable[[Any], str],
    limit: int,
) -> Table:
    """`{path, a, b}` rows side by side (a side left out: –)."""
    table = titled_table(Text(title, style="bold"))
    for column in ("path", name_a, name_b):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            Text(row["path"] or "(the whole output)"),
            Text(clip(shown(row["a"]), limit)) if "a" in row else Text("–", style="dim"),
            Text(clip(shown(row["b"]), limit)) if "b" in row else Text("–", style="dim"),
        )
    return table


def _shown_value(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _turns_table(d: RunDiff, name_a: str, name_b: str) -> Table:
    table = titled_table(Text("turns", style="bold"))
    table.add_column("turn", no_wrap=True)
    table.add_column(name_a, overflow="fold", ratio=1)
    table.add_column(name_b, overflow="fold", ratio=1)
    for pair in d.turns:
        mark = Text(f"{pair.number} ", style="dim")
        if pair.same:
            mark.append("=", style="green")
            table.add_row(mark, Text("(the same in both)", style="dim"), Text(""))
            continue
        mark.append("≠", style="bold yellow")
        if pair.number == d.diverged_at:
            mark.append(" first", style="bold yellow")
        table.add_row(
            mark, _message_text(pair.a, d.a.transcript), _message_text(pair.b, d.b.transcript)
        )
    return table


def _calls_table(calls: Sequence[CallPair], name_a: str, name_b: str) -> Any:
    if not calls:
        return Text("tool calls: none in either run", style="dim")
    table = titled_table(Text("tool calls, aligned", style="bold"))
    table.add_column("", no_wrap=True)
    table.add_column(name_a, overflow="fold", ratio=1)
    table.add_column(name_b, overflow="fold", ratio=1)
    for pair in calls:
        mark = Text("=", style="green") if pair.same else Text("≠", style="bold yellow")
        table.add_row(mark, _call_text(pair.a), _call_text(pair.b))
    return table


def _turn_dict(turn: Turn | None, transcript: Sequence[Mapping[str, Any]]) -> Any:
    if turn is None:
        return None
    return {"messages": list(turn.messages), "content": [transcript[i] for i in turn.messages]}


def diff_dict(d: RunDiff, ref_a: Mapping[str, Any], ref_b: Mapping[str, Any]) -> dict[str, Any]:
    """`passhat diff --json`: both runs' references, the item and state diffs, the turns
    (each run's messages of each turn in full) and the aligned tool calls."""
    return {
        "case": d.a.case_id,
        "a": {**ref_a, "run": d.a.run_index, "status": d.a.status, "error": _error(d.a)},
        "b": {**ref_b, "run": d.b.run_index, "status": d.b.status, "error": _error(d.b)},
        "items": [
            {
                "scorer": i.scorer,
                "only_a": list(i.only_a),
                "only_b": list(i.only_b),
                "both": list(i.both),
                "expected": list(i.expected),
            }
            for i in d.items
        ],
        "state": list(d.state),
        "no_transcript": list(d.no_transcript),
        "basis": d.basis,
        "parted_at": d.parted_at,
        "first_calls": [c.to_dict() if c else None for c in d.first_calls]
        if d.basis == "tool calls" and d.parted_at is not None
        else None,
        "output": list(d.output),
        "scorers_differ": list(d.scorers),
        "graded_differently": d.graded_differently,
        "diverged_at": d.diverged_at,
        "divergence": list(d.divergence),
        "turns": [
            {
                "turn": p.number,
                "same": p.same,
                "a": _turn_dict(p.a, d.a.transcript),
                "b": _turn_dict(p.b, d.b.transcript),
            }
            for p in d.turns
        ],
        "tool_calls": [
            {
                "same": p.same,
                "a": p.a.to_dict() if p.a else None,
                "b": p.b.to_dict() if p.b else None,
            }
            for p in d.calls
        ],
    }


def _error(run: RunRecord) -> str | None:
    if run.status != "errored":
        return None
    return f"{run.error_type}: {run.error_message}"


# ------------------------------------------------------------------------ the tree


def runs_in(runs: Iterable[int], lang: str = "en") -> str:
    """`run 2`, `runs 1 and 3`, `runs 1, 2 and 4` (`第 1、2、4 次`)."""
    runs = list(runs)
    if len(runs) == 1:
        return t("why_run", lang, runs=runs[0])
    head = t("list_sep", lang).join(str(r) for r in runs[:-1])
    return t("why_runs", lang, runs=f"{head}{t('why_and', lang)}{runs[-1]}")


def _key(key: str, basis: str) -> str:
    """A label key for the tree's steps: turns, or (`_call`) tool calls."""
    return key + "_call" if basis == "tool calls" else key


def _n(n: int, basis: str) -> int:
    """A step's number as shown: a turn's own, a call's from 1."""
    return n + 1 if basis == "tool calls" else n


def turn_span(first: int, last: int, lang: str = "en", basis: str = "turns") -> str:
    if first == last:
        return t(_key("why_turn", basis), lang, n=_n(first, basis))
    return t(_key("why_turns", basis), lang, first=_n(first, basis), last=_n(last, basis))


def verdicts_text(runs: Sequence[int], statuses: Mapping[int, str], lang: str = "en") -> str:
    """`passed: runs 1 and 3; failed: run 2` (empty without statuses)."""
    groups: dict[str, list[int]] = {}
    for r in runs:
        if r in statuses:
            groups.setdefault(statuses[r], []).append(r)
    colon = "：" if lang != "en" else ": "
    return t("why_sep", lang).join(
        f"{t(status, lang)}{colon}{runs_in(rs, lang)}" for status, rs in sorted(groups.items())
    )


def branch_label(
    branch: Branch,
    root: bool = False,
    lang: str = "en",
    basis: str = "turns",
    statuses: Mapping[int, str] | None = None,
) -> Text:
    """`runs 1 and 3 · turns 0–2 the same · passed: runs 1 and 3`, `branched at turn 1:
    run 2 · turns 1–2 · failed: run 2`."""
    out = Text(runs_in(branch.runs, lang), style="bold")
    if branch.last >= branch.first:
        out.append(" · " + turn_span(branch.first, branch.last, lang, basis))
        if len(branch.runs) > 1:
            out.append(" " + t("why_same", lang))
    if not root:
        at = t(_key("why_branched_at", basis), lang, n=_n(branch.first, basis))
        out = Text.assemble(Text(at, style="yellow"), out)
    if branch.ended and branch.children:
        out.append(" · " + t("why_ended", lang, runs=runs_in(branch.ended, lang)), style="dim")
    elif branch.ended and len(branch.runs) > 1:
        out.append(" · " + t("why_identical", lang), style="green")
    verdicts = verdicts_text(branch.runs, statuses or {}, lang)
    if verdicts:
        out.append(" · " + verdicts, style="dim")
    return out


def divergence_tree_view(
    tree: Branch,
    case: str,
    no_transcript: Sequence[int] = (),
    lang: str = "en",
    basis: str = "turns",
    statuses: Mapping[int, str] | None = None,
) -> Tree:
    """The tree as rich renders it, under a title naming the case."""
    view = Tree(Text(t(_key("why_tree_title", basis), lang, case=case)), guide_style="dim")
    node = view.add(branch_label(tree, root=True, lang=lang, basis=basis, statuses=statuses))
    _add_children(node, tree, lang, basis, statuses)
    if no_transcript and basis == "turns":
        line = t("why_no_transcript", lang, runs=runs_in(no_transcript, lang))
        view.add(Text(line, style="yellow"))
    return view


BRANCHES_SHOWN = 12
"""Branches of one node drawn at most; the rest are counted."""


def _add_children(
    node: Tree, branch: Branch, lang: str, basis: str, statuses: Mapping[int, str] | None
) -> None:
    for child in branch.children[:BRANCHES_SHOWN]:
        label = branch_label(child, lang=lang, basis=basis, statuses=statuses)
        _add_children(node.add(label), child, lang, basis, statuses)
    rest = branch.children[BRANCHES_SHOWN:]
    if rest:
        runs = sorted(r for c in rest for r in c.runs)
        line = t("why_more_branches", lang, n=len(rest), runs=runs_in(runs, lang))
        node.add(Text(line, style="dim"))


def tree_sentence(tree: Branch, lang: str = "en", basis: str = "turns") -> str:
    """The tree in words: `runs 1 and 3 agree until turn 2; run 2 branched at turn 1`."""
    parts: list[str] = []

    def walk(b: Branch) -> None:
        if len(b.runs) > 1 and b.last >= b.first:
            runs = runs_in(b.runs, lang)
            if not b.children:
                parts.append(t("why_agree_end", lang, runs=runs))
            else:
                line = t(_key("why_agree_until", basis), lang, runs=runs, n=_n(b.last, basis))
                the_input = b.last == 0 and basis == "turns"
                parts.append(line + (t("why_the_input", lang) if the_input else ""))
        singles = [r for c in b.children if len(c.runs) == 1 for r in c.runs]
        key = _key("why_branched_one" if len(singles) == 1 else "why_branched_each", basis)
        if singles:
            parts.append(t(key, lang, runs=runs_in(singles, lang), n=_n(b.last + 1, basis)))
        for c in b.children:
            if len(c.runs) > 1:
                walk(c)

    walk(tree)
    return t("why_sep", lang).join(parts)


def graded_lines(why: CaseWhy, lang: str = "en") -> list[str]:
    """Each group of runs that did the same and were graded differently, in words."""
    out = []
    for g in why.graded:
        scorers = ", ".join(g.scorers) or t("why_the_verdict", lang)
        out.append(
            t(
                "why_graded",
                lang,
                runs=runs_in(g.runs, lang),
                verdicts=verdicts_text(g.runs, g.verdicts, lang),
                scorers=scorers,
            )
        )
    return out


# --------------------------------------------------------------------- evidence


def _write_text(w: Write, lang: str) -> str:
    if w.turn is None:
        return t("ev_write_no_turn", lang, tool=w.tool, call=w.call)
    return t("ev_write", lang, turn=w.turn, tool=w.tool, call=w.call)


def evidence_rows(e: ItemEvidence, lang: str = "en") -> list[str]:
    """Who wrote the item, grouped: `runs 1 and 3: turn 1, update_ticket call 1`."""
    groups: dict[str, list[int]] = {}
    for run in e.runs:
        writes = e.writers(run)
        if writes:
            key = t("why_sep", lang).join(_write_text(w, lang) for w in writes)
            if run not in e.present:
                key += t("ev_absent", lang)
        elif run in e.present:
            key = t("ev_no_call", lang)
        else:
            continue
        groups.setdefault(key, []).append(run)
    colon = "：" if lang != "en" else ": "
    return [f"{runs_in(runs, lang)}{colon}{key}" for key, runs in groups.items()]


def evidence_text(e: ItemEvidence, lang: str = "en", first_message: int = 0) -> Text:
    """Who wrote the item, and for an item no run holds where its source was sent;
    messages numbered from `first_message` (0 as `passhat show` numbers them, 1 as the
    HTML page's transcripts do)."""
    rows = evidence_rows(e, lang)
    if rows:
        out = Text(t("why_sep", lang).join(rows))
    else:
        out = Text(t("ev_none", lang), style="bold red")
    for s in e.sources:
        out.append("\n" + t("ev_source", lang) + " ", style="dim").append(s.path, style="bold")
        out.append(f" “{clip(s.text, 60)}”: ")
        if s.sent:
            where = t("list_sep", lang).join(
                t("ev_message", lang, n=i + first_message) for i in sorted(set(s.sent.values()))
            )
            sent = t("ev_sent", lang, runs=runs_in(sorted(s.sent), lang), where=where)
            out.append(sent, style="green")
        if s.unsent:
            if s.sent:
                out.append(t("why_sep", lang))
            out.append(t("ev_unsent", lang, runs=runs_in(s.unsent, lang)), style="red")
    if e.no_transcript and e.sources:
        line = t("ev_no_search", lang, runs=runs_in(e.no_transcript, lang))
        out.append("\n" + line, style="yellow")
    return out


def evidence_table(case: str, evidence: Sequence[ItemEvidence], lang: str = "en") -> Table:
    """Per item: which run, turn and tool call wrote it; for an item no run holds, whether
    its input text was sent."""
    table = titled_table(Text(t("ev_title", lang, case=case)))
    table.add_column(t("item", lang), overflow="fold")
    table.add_column(t("ev_held", lang), no_wrap=True)
    table.add_column(t("ev_written", lang), overflow="fold", ratio=1)
    for e in evidence:
        held = f"{len(e.present)}/{len(e.runs)}"
        item = Text(one_line(e.item))
        if not e.expected:
            item.append(t("ev_extra", lang), style="magenta")
        table.add_row(item, held, evidence_text(e, lang))
    return table


def print_diff(console: Console, d: RunDiff, name_a: str, name_b: str) -> None:
    console.print(diff_table(d, name_a, name_b))


def why_renderables(why: CaseWhy, lang: str = "en") -> list[Any]:
    """A case section's divergence tree (with its sentence) and item evidence."""
    out: list[Any] = []
    if why.tree is None:
        if why.no_transcript:
            line = t("why_no_turns", lang, case=why.case, runs=runs_in(why.no_transcript, lang))
            out.append(Text(line, style="yellow"))
    else:
        view = divergence_tree_view(
            why.tree, why.case, why.no_transcript, lang, why.basis, why.statuses
        )
        out.append(view)
        sentence = tree_sentence(why.tree, lang, why.basis)
        if sentence:
            out.append(Text("  " + sentence, style="dim"))
    for line in graded_lines(why, lang):
        out.append(Text(line, style="bold magenta"))
    if why.evidence:
        out.append(Fitted(evidence_table(why.case, why.evidence, lang)))
    for key, values in why.notes:
        out.append(Text(t(key, lang, **values), style="yellow"))
    return out


# ------------------------------------------------------------------------ the page

PAIR_RUNS = 10
"""Runs of a case (at most) whose pairs the HTML page carries diffs of: 45 pairs."""


def what_differs(d: RunDiff) -> str | None:
    """In words (English, as `passhat diff` says it): what differs at the first turn."""
    if d.diverged_at is None:
        return None
    pair = d.turns[d.diverged_at]
    if pair.a is None or pair.b is None:
        return None
    if d.diverged_at == 0:
        return "the input the model was sent differs"
    return _what_differs(pair.a, pair.b)


def pair_dict(d: RunDiff) -> dict[str, Any]:
    """One pair of runs for the HTML page's picker: what `passhat diff --json` holds,
    with the messages as indices into each run's transcript (the page has the runs)."""
    return {
        "a": d.a.run_index,
        "b": d.b.run_index,
        "statusA": d.a.status,
        "statusB": d.b.status,
        "basis": d.basis,
        "parted": d.parted_at,
        "graded": ", ".join(d.scorers) or "the verdict" if d.graded_differently else None,
        "output": [
            {
                "path": row["path"],
                **{k: clip(_shown_value(row[k]), 400) for k in ("a", "b") if k in row},
            }
            for row in d.output
        ],
        "diverged": d.diverged_at,
        "noTranscript": [d.a.run_index if s == "a" else d.b.run_index for s in d.no_transcript],
        "items": [
            {
                "scorer": i.scorer,
                "onlyA": list(i.only_a),
                "onlyB": list(i.only_b),
                "both": list(i.both),
            }
            for i in d.items
        ],
        "state": [
            {"path": row["path"], **{k: clip(_json(row[k]), 400) for k in ("a", "b") if k in row}}
            for row in d.state
        ],
        "where": [
            {"path": row["path"], **{k: clip(_json(row[k]), 400) for k in ("a", "b") if k in row}}
            for row in d.divergence
        ],
        "turns": [
            [
                p.number,
                p.same,
                list(p.a.messages) if p.a else None,
                list(p.b.messages) if p.b else None,
            ]
            for p in d.turns
        ],
        "calls": [[_call_cell(p.a), _call_cell(p.b), p.same] for p in d.calls],
    }


def _call_cell(call: ToolCall | None) -> dict[str, Any] | None:
    """A call as the page's compare draws it: number, tool, arguments, result or error
    (an imported run's calls come from its transcript, not the page's tool-call blob)."""
    if call is None:
        return None
    out: dict[str, Any] = {
        "n": call.number,
        "tool": call.tool,
        "arguments": clip(_json(call.arguments), 400),
    }
    if call.error:
        out["error"] = clip(str(call.error), 400)
    elif call.recorded:
        out["result"] = clip(_json(call.result), 400)
    return out


def why_view(why: CaseWhy, lang: str = "en") -> dict[str, Any]:
    """The divergence tree and evidence of a case as plain strings for the template."""

    def branch(b: Branch, root: bool = False) -> dict[str, Any]:
        children = [branch(c) for c in b.children[:BRANCHES_SHOWN]]
        rest = b.children[BRANCHES_SHOWN:]
        more = None
        if rest:
            runs = sorted(r for c in rest for r in c.runs)
            more = t("why_more_branches", lang, n=len(rest), runs=runs_in(runs, lang))
        label = branch_label(b, root=root, lang=lang, basis=why.basis, statuses=why.statuses)
        return {
            "label": label.plain,
            "runs": list(b.runs),
            "children": children,
            "more": more,
        }

    return {
        "skipped": None,
        "tree": branch(why.tree, root=True) if why.tree is not None else None,
        "title": t(_key("why_tree_title", why.basis), lang, case=why.case),
        "sentence": tree_sentence(why.tree, lang, why.basis) if why.tree is not None else None,
        "graded": graded_lines(why, lang),
        "no_turns": (
            t("why_no_turns", lang, case=why.case, runs=runs_in(why.no_transcript, lang))
            if why.tree is None and why.no_transcript
            else None
        ),
        "no_transcript": (
            t("why_no_transcript", lang, runs=runs_in(why.no_transcript, lang))
            if why.tree is not None and why.no_transcript and why.basis == "turns"
            else None
        ),
        "evidence_title": t("ev_title", lang, case=why.case),
        "evidence": [
            {
                "item": e.item,
                "expected": e.expected,
                "held": f"{len(e.present)}/{len(e.runs)}",
                "lines": evidence_text(e, lang, first_message=1).plain.split("\n"),
                "none": not e.writes,
            }
            for e in why.evidence
        ],
        "notes": [t(key, lang, **values) for key, values in why.notes],
    }
