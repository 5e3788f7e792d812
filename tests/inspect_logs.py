"""Real Inspect AI logs, written by inspect-ai itself (never hand-written JSON).

`make_logs(dir)` runs tiny Tasks in a subprocess (Inspect sets up its own
logging and event loop; a child process keeps that out of pytest). `tiny-math`: three
samples, epochs=3, the `mockllm/model` model (no network), the `match` scorer.

    s1  correct in every epoch                       3 passed
    s2  wrong in epochs 1 and 3                      1 passed, 2 failed
    s3  its solver raises in epoch 2                 2 passed, 1 errored

Inspect's accuracy weighs samples after reducing each one's scored epochs by
their mean: (1 + 1/3 + 1) / 3 = 0.778; passhat's pass rate weighs counted runs:
6 / 8 = 0.75, and s3's two counted runs make the dataset figures pass@2 / pass^2.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TASK = """
import sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, match, scorer
from inspect_ai.solver import solver


@solver
def flaky():
    async def solve(state, generate):
        if state.sample_id == "s3" and state.epoch == 2:
            raise RuntimeError(f"tool crashed in epoch {state.epoch}")
        wrong = state.sample_id == "s2" and state.epoch != 2
        state.output.completion = "5" if wrong else "4"
        return state

    return solve


@solver
def chatty():
    async def solve(state, generate):
        # epochs 1 and 3 think alike and answer 4; epoch 2 thinks otherwise and answers 5
        answer = "5" if state.epoch == 2 else "4"
        thought = "Adding: 2 and 2." if state.epoch != 2 else "Guessing."
        state.messages.append(ChatMessageAssistant(content=thought))
        state.messages.append(ChatMessageAssistant(content=answer))
        state.output.completion = answer
        return state

    return solve


@solver
def steady():
    async def solve(state, generate):
        state.messages.append(ChatMessageAssistant(content="4"))
        state.output.completion = "4"
        return state

    return solve


@scorer(metrics=[accuracy()])
def moody():
    # a judge that does not give one answer to one state: epoch 2 is marked wrong
    async def score(state, target):
        return Score(value=INCORRECT if state.epoch == 2 else CORRECT)

    return score


def math_task(name, solver, scorer, samples=1):
    ids = [f"s{i}" for i in range(1, samples + 1)]
    return Task(
        name=name,
        dataset=[Sample(id=id, input="What is 2+2?", target="4") for id in ids],
        solver=solver,
        scorer=scorer,
        epochs=3,
    )


tasks = [
    math_task("tiny-math", flaky(), match(), samples=3),
    math_task("chatty-math", chatty(), match()),
    math_task("moody-math", steady(), moody()),
]
logs = eval(
    tasks, model="mockllm/model", log_dir=sys.argv[1], fail_on_error=False, display="none"
)
for log in logs:
    assert log.status == "success", log.status
    print(log.eval.task, log.location)
"""
"""Every task the tests import, run by one Inspect process (its start is most of the
cost): `tiny-math` (the table above), `chatty-math`, whose epochs think and answer
differently, and `moody-math`, whose epochs do the same and a judge marks epoch 2 wrong
(test_divergence_inspect). Prints each task's name and log path."""


def make_logs(root: Path) -> dict[str, Path]:
    """Run the tasks once; each task's .eval log, alone in its folder `root/<task>`."""
    root.mkdir(parents=True, exist_ok=True)
    script = root / "tasks.py"
    script.write_text(TASK)
    done = subprocess.run(
        [sys.executable, str(script), str(root / "all")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    logs = {}
    for line in done.stdout.strip().splitlines()[-3:]:
        task, location = line.split(" ", 1)
        log = Path(location.removeprefix("file://"))
        (root / task).mkdir()
        logs[task] = log.rename(root / task / log.name)
    return logs


def trimmed_json_log(log: Path, out: Path, drop: tuple[str, int]) -> Path:
    """The same log without one sample × epoch, written as .json by Inspect's own writer
    (what a cancelled eval leaves: an epoch that never ran)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    data = read_eval_log(str(log))
    assert data.samples is not None
    data.samples = [s for s in data.samples if (str(s.id), s.epoch) != drop]
    write_eval_log(data, str(out), format="json")
    return out


def invalidated_log(log: Path, out: Path, sample: tuple[str, int], reason: str) -> Path:
    """The same log with one sample × epoch invalidated through Inspect's own API."""
    from inspect_ai.log import ProvenanceData, invalidate_samples, read_eval_log, write_eval_log

    data = read_eval_log(str(log))
    assert data.samples is not None
    uuid = next(s.uuid for s in data.samples if (str(s.id), s.epoch) == sample)
    assert uuid is not None
    edited = invalidate_samples(data, [uuid], ProvenanceData(author="reviewer", reason=reason))
    write_eval_log(edited, str(out))
    return out


def rewritten_log(log: Path, out: Path, *, epochs: int | None, status: str, samples: bool) -> Path:
    """The same log, written by Inspect's own writer, with `eval.config.epochs` set (None:
    the log records none, as `eval.config` `{}`), another status, and its samples kept or
    dropped (a header-only log, as a cancelled eval can leave)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    data = read_eval_log(str(log))
    data.eval.config.epochs = epochs
    data.status = status  # type: ignore[assignment]
    if not samples:
        data.samples = None
    write_eval_log(data, str(out), format="json")
    return out


def rescored_log(log: Path, out: Path, sample: tuple[str, int], value: float) -> Path:
    """The same log with one sample × epoch's score value replaced (a scorer that returned
    NaN), written by Inspect's own writer."""
    from inspect_ai.log import read_eval_log, write_eval_log

    data = read_eval_log(str(log))
    assert data.samples is not None
    chosen = next(s for s in data.samples if (str(s.id), s.epoch) == sample)
    assert chosen.scores is not None
    for score in chosen.scores.values():
        score.value = value
    write_eval_log(data, str(out))
    return out


def two_reducer_log(log: Path, out: Path) -> Path:
    """The same log whose results hold its scorer twice, reduced by mean and by max (as
    `epochs=Epochs(3, ["mean", "max"])` writes them)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    data = read_eval_log(str(log))
    assert data.results is not None
    (score,) = data.results.scores
    mean = score.model_copy(update={"reducer": "mean"})
    top = score.model_copy(deep=True, update={"reducer": "max"})
    for metric in top.metrics.values():
        metric.value = 1.0
    data.results.scores = [mean, top]
    write_eval_log(data, str(out))
    return out
