"""The benchmark workloads as Inspect AI tasks (run in Inspect's own venv).

    inspect eval inspect_tasks.py@instant -T samples=1000 --epochs 5 --model mockllm/model
    inspect eval inspect_tasks.py@waits_100ms -T samples=1000 --max-samples 50 ...

No model is called: the solver answers at once (or after 100 ms) and the scorer
compares with the target, as passhat's benchmark agents write the goal state.
"""

import asyncio

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver


@solver
def answer(delay: float = 0.0):  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if delay:
            await asyncio.sleep(delay)
        state.output.completion = "AC3:conflict AC4:unverifiable"
        return state

    return solve


@scorer(metrics=[accuracy()])
def exact():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        ok = state.output.completion == target.text
        return Score(value=CORRECT if ok else INCORRECT)

    return score


def _samples(samples: int) -> list[Sample]:
    return [
        Sample(id=f"case-{i:05d}", input="ticket", target="AC3:conflict AC4:unverifiable")
        for i in range(samples)
    ]


@task
def instant(samples: int = 1000) -> Task:
    return Task(dataset=_samples(samples), solver=answer(), scorer=exact())


@task
def waits_100ms(samples: int = 1000) -> Task:
    return Task(dataset=_samples(samples), solver=answer(0.1), scorer=exact())
