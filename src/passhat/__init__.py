"""passhat: run each evaluation case k times and report pass@1, pass@k and pass^k honestly.

    import passhat
    e = passhat.evaluate("examples/clarify", cases=["ac-conflict-001"])
    print(e)                      # the figures, labelled by the runs behind them
    e.accounting, e.uncertainty   # what `passhat report --json` answers, as objects

The public surface is small and pinned by a test; the machinery lives in the
modules, and each loads on first use (`passhat --help` imports none of them, and
`passhat metrics` does not pay for the pydantic and YAML it never touches).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from passhat.errors import InputError, NoRunsError, PasshatError

if TYPE_CHECKING:
    from passhat.accounting import Accounting, CaseAccount, DatasetSummary, Ledger, account
    from passhat.agents import Agent, RunContext
    from passhat.env import Environment, Tool, ToolError, ToolOutcome, tool
    from passhat.evaluation import (
        Events,
        Interrupted,
        evaluate,
        evaluate_async,
        resume,
        resume_async,
    )
    from passhat.executors import Executor
    from passhat.gate import Gate, Requirement
    from passhat.metrics import (
        CaseMetrics,
        DatasetMetrics,
        aggregate,
        dataset,
        pass_at,
        pass_at_curve,
        pass_hat,
        pass_hat_curve,
    )
    from passhat.models.base import (
        CallContext,
        Message,
        Model,
        ModelResponse,
        ToolCall,
        ToolSpec,
        Usage,
    )
    from passhat.records import ExperimentRecord, RunRecord
    from passhat.results import Experiment, Experiments, Outcome, why
    from passhat.results import open_store as open
    from passhat.rounds import Rounds
    from passhat.scoring import Score, ScorerError
    from passhat.store import Store
    from passhat.suite import Case, Suite, load_suite

__version__ = "0.1.0"

_LAZY = {
    "Accounting": "passhat.accounting",
    "CaseAccount": "passhat.accounting",
    "DatasetSummary": "passhat.accounting",
    "Ledger": "passhat.accounting",
    "account": "passhat.accounting",
    "CaseMetrics": "passhat.metrics",
    "DatasetMetrics": "passhat.metrics",
    "aggregate": "passhat.metrics",
    "dataset": "passhat.metrics",
    "pass_at": "passhat.metrics",
    "pass_at_curve": "passhat.metrics",
    "pass_hat": "passhat.metrics",
    "pass_hat_curve": "passhat.metrics",
    "Agent": "passhat.agents",
    "RunContext": "passhat.agents",
    "Environment": "passhat.env",
    "Tool": "passhat.env",
    "ToolError": "passhat.env",
    "ToolOutcome": "passhat.env",
    "tool": "passhat.env",
    "Executor": "passhat.executors",
    "Gate": "passhat.gate",
    "Requirement": "passhat.gate",
    "Events": "passhat.evaluation",
    "Interrupted": "passhat.evaluation",
    "Outcome": "passhat.results",
    "evaluate": "passhat.evaluation",
    "evaluate_async": "passhat.evaluation",
    "resume": "passhat.evaluation",
    "resume_async": "passhat.evaluation",
    "Experiment": "passhat.results",
    "Experiments": "passhat.results",
    "open": "passhat.results:open_store",
    "why": "passhat.results",
    "Rounds": "passhat.rounds",
    "CallContext": "passhat.models.base",
    "Message": "passhat.models.base",
    "Model": "passhat.models.base",
    "ModelResponse": "passhat.models.base",
    "ToolCall": "passhat.models.base",
    "ToolSpec": "passhat.models.base",
    "Usage": "passhat.models.base",
    "ExperimentRecord": "passhat.records",
    "RunRecord": "passhat.records",
    "Score": "passhat.scoring",
    "ScorerError": "passhat.scoring",
    "Store": "passhat.store",
    "Case": "passhat.suite",
    "Suite": "passhat.suite",
    "load_suite": "passhat.suite",
}


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'passhat' has no attribute {name!r}")
    module, _, attr = where.partition(":")  # "module:attr" when the names differ
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "Accounting",
    "Agent",
    "CallContext",
    "Case",
    "CaseAccount",
    "CaseMetrics",
    "DatasetMetrics",
    "DatasetSummary",
    "Environment",
    "Events",
    "Executor",
    "Experiment",
    "ExperimentRecord",
    "Experiments",
    "Gate",
    "InputError",
    "Interrupted",
    "Ledger",
    "Message",
    "Model",
    "ModelResponse",
    "NoRunsError",
    "Outcome",
    "PasshatError",
    "Requirement",
    "Rounds",
    "RunContext",
    "RunRecord",
    "Score",
    "ScorerError",
    "Store",
    "Suite",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
    "__version__",
    "account",
    "aggregate",
    "dataset",
    "evaluate",
    "evaluate_async",
    "load_suite",
    "open",
    "pass_at",
    "pass_at_curve",
    "pass_hat",
    "pass_hat_curve",
    "resume",
    "resume_async",
    "tool",
    "why",
]
