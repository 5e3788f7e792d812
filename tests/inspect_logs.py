"""Real Inspect AI logs, written by inspect-ai itself (never hand-written JSON).

`make_logs(dir)` runs a tiny Task in a subprocess (Inspect sets up its own
logging and event loop; a child process keeps that out of pytest): three
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
from inspect_ai.scorer import match
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


task = Task(
    name="tiny-math",
    dataset=[Sample(id=f"s{i}", input="What is 2+2?", target="4") for i in (1, 2, 3)],
    solver=flaky(),
    scorer=match(),
    epochs=3,
)
logs = eval(
    task, model="mockllm/model", log_dir=sys.argv[1], fail_on_error=False, display="none"
)
assert logs[0].status == "success", logs[0].status
print(logs[0].location)
"""


def make_logs(log_dir: Path) -> Path:
    """Run the task once; return the path of its .eval log."""
    script = log_dir.parent / "tiny_math_task.py"
    script.write_text(TASK)
    done = subprocess.run(
        [sys.executable, str(script), str(log_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=log_dir.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip().splitlines()[-1].removeprefix("file://"))


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
