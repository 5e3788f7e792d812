"""`passhat diff`: two runs of a case side by side, and the first turn where they part."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from passhat.cli._app import app, console, write_json
from passhat.cli._help import examples
from passhat.cli._options import JsonOption
from passhat.cli._store import DbOption, open_store
from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunRecord

USAGE = (
    "give EXPERIMENT CASE RUN_A RUN_B (two runs of one experiment), or "
    "EXPERIMENT:CASE:RUN EXPERIMENT:CASE:RUN (runs of two experiments)"
)


RefsArg = Annotated[
    list[str],
    typer.Argument(
        metavar="EXPERIMENT CASE RUN_A RUN_B | A:CASE:RUN B:CASE:RUN",
        help="Two runs of one experiment, or EXPERIMENT:CASE:RUN twice.",
        show_default=False,
    ),
]
"""`diff`'s argument: the two runs, in either spelling `USAGE` names (`parse_refs` reads it)."""


def parse_refs(refs: list[str]) -> list[tuple[str, str, int]]:
    """(experiment, case, run) of the two runs the arguments name."""
    if len(refs) == 4:
        experiment, case = refs[0], refs[1]
        return [(experiment, case, _index(refs[2])), (experiment, case, _index(refs[3]))]
    if len(refs) == 2 and all(ref.count(":") >= 2 for ref in refs):
        out = []
        for ref in refs:
            experiment, rest = ref.split(":", 1)
            case, run = rest.rsplit(":", 1)
            if not experiment or not case:
                raise InputError(f"{ref!r}: {USAGE}")
            out.append((experiment, case, _index(run)))
        return out
    shown = " ".join(refs) or "nothing"
    raise InputError(f"passhat diff {shown}: {USAGE}")


def _index(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"run {text!r} is not a run index; give a number from 1 (e.g. 2)")
    return int(text)


def no_transcript_note(experiment: ExperimentRecord, run: RunRecord) -> str | None:
    """Why a run holds no transcript, in one line (None when it holds one)."""
    if run.transcript:
        return None
    ref = experiment.name or experiment.id
    source = experiment.source if isinstance(experiment.source, dict) else {}
    if experiment.kind in ("imported", "audited"):
        tool = source.get("tool", "its source")
        return (
            f"run {run.run_index} of experiment {ref} holds no transcript: it was "
            f"{experiment.kind} from {tool}, which kept none for it; only its final state "
            "and score are compared"
        )
    return (
        f"run {run.run_index} of experiment {ref} holds no transcript (its agent recorded "
        "none); only its final state, score and tool calls are compared"
    )


@app.command(
    epilog=examples(
        "passhat diff latest ac-conflict-001 1 2",
        "passhat diff baseline:ac-conflict-001:1 candidate:ac-conflict-001:1",
        "passhat diff latest ac-conflict-001 1 2 --json",
    )
)
def diff(refs: RefsArg, as_json: JsonOption = False, db: DbOption = None) -> None:
    """Two runs side by side: items found in one and not the other, outputs and final
    states diffed, tool calls aligned, and where they part (turn, else tool call).

    Runs are compared turn by turn when both hold a transcript, else call by call
    (tool, arguments, result, error), else by outputs and final states; the answer
    says which, names both verdicts, and says "graded differently" when the runs did
    the same and their verdicts differ."""
    from passhat.cli.read import _check_run_ref
    from passhat.divergence import diff_runs
    from passhat.report.diff import diff_dict, print_diff

    wanted = parse_refs(refs)
    found: list[tuple[ExperimentRecord, RunRecord]] = []
    with open_store(db, read_only=True) as store:
        for experiment_ref, case, index in wanted:
            experiment = store.experiment(experiment_ref)
            _check_run_ref(experiment, case, index)
            found.append((experiment, store.run(experiment.id, case, index)))
    (ea, a), (eb, b) = found
    d = diff_runs(a, b)
    same = ea.id == eb.id
    name_a = f"run {a.run_index}" if same else f"{ea.name or ea.id} run {a.run_index}"
    name_b = f"run {b.run_index}" if same else f"{eb.name or eb.id} run {b.run_index}"
    if name_a == name_b:
        name_b += " (again)"
    notes = [n for n in (no_transcript_note(ea, a), no_transcript_note(eb, b)) if n]
    if as_json:
        data: dict[str, Any] = diff_dict(d, _ref(ea), _ref(eb))
        data["notes"] = notes
        write_json(data)
        return
    print_diff(console, d, name_a, name_b)
    from rich.text import Text

    for note in notes:
        console.print(Text(note, style="yellow"), soft_wrap=True)


def _ref(e: ExperimentRecord) -> dict[str, Any]:
    return {"experiment": e.id, "name": e.name, "kind": e.kind}
