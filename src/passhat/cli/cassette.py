"""`passhat cassette`: a finished experiment's model answers as a replay cassette,
so it can be regraded (or its agent re-run) later without a model call."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from passhat.cli._app import app, console
from passhat.cli._help import examples
from passhat.cli._store import DbOption, ExperimentArg, open_store
from passhat.errors import InputError, StoreError
from passhat.plain import plural


@app.command(
    epilog=examples(
        "passhat cassette mine-1 -o cassettes/mine.jsonl",
        "passhat run SUITE --model replay:cassettes/mine.jsonl",
    )
)
def cassette(
    experiment_ref: ExperimentArg,
    output: Annotated[
        Path,
        typer.Option("-o", "--output", metavar="FILE", help="Cassette file to write (.jsonl)."),
    ],
    db: DbOption = None,
) -> None:
    """Turn a finished experiment into a replay cassette: regrade it later without a call."""
    from passhat.models.replay import cassette_from_runs

    with open_store(db, read_only=True) as store:
        experiment = store.experiment(experiment_ref)
        recorded = experiment.model_config.get("recorded") if experiment.model_config else None
        meta: dict[str, Any] = {
            "model": experiment.model,
            "prompt_version": experiment.prompt_version,
            "experiment": experiment.id,
            "suite_hash": experiment.suite_hash,
            "note": f"recorded from experiment {experiment.name or experiment.id} "
            f"({experiment.created_at}) by passhat cassette",
        }
        if isinstance(recorded, dict):
            meta["replayed_from"] = recorded
        # each run's transcript alone, decoded as read: not every run whole (1.8 GB at
        # 100,000 runs); the cassette holds the model answers only
        rows = store.columns(experiment.id, ("case_id", "run_index", "transcript"))
        read = [0]
        tape = cassette_from_runs(meta, _transcripts(rows, read))
    runs = read[0]
    if not tape.answers:
        ref = experiment.name or experiment.id
        # not "none asked a model": runs whose every call failed asked, and got no answer
        raise InputError(
            f"experiment {ref} holds no model answer to record: none of its "
            f"{plural(runs, 'run')} (of kind {experiment.kind!r}) has a model answer in its "
            "transcript (the model never answered, or the agent kept no transcript); "
            "nothing was written"
        )
    try:
        tape.dump(output)
    except OSError as error:
        raise InputError(f"-o {output}: cannot write ({error.strerror})") from None
    console.print(
        Text(
            f"{output}: {plural(len(tape.answers), 'model answer')} from "
            f"{plural(runs, 'run')}; replay with "
            f"--model replay:{output}"
        ),
        soft_wrap=True,
    )


def _transcripts(
    rows: Iterable[tuple[Any, ...]], read: list[int]
) -> Iterator[tuple[str, int, list[dict[str, Any]]]]:
    """(case, run index, transcript) of each stored row, decoded as it comes; `read[0]`
    counts the runs."""
    import json

    for case_id, index, text in rows:
        read[0] += 1
        try:
            transcript = json.loads(text)
        except (TypeError, ValueError) as error:
            raise StoreError(
                f"the store is damaged: transcript of run {index} of case {case_id!r} "
                f"is not JSON ({error})"
            ) from None
        yield case_id, index, transcript
