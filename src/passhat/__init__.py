"""passhat: run each evaluation case k times and report pass@1, pass@k and pass^k honestly.

The public surface is small and pinned by a test; the machinery lives in the modules.
"""

from __future__ import annotations

from passhat.accounting import Accounting, CaseAccount, DatasetSummary, Ledger, account
from passhat.agents import Agent, RunContext
from passhat.env import Environment, ToolOutcome
from passhat.errors import NoRunsError, PasshatError
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
from passhat.scoring import Score, ScorerError
from passhat.store import Store
from passhat.suite import Case, Suite, load_suite

__version__ = "0.1.0"

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
    "ExperimentRecord",
    "Ledger",
    "Message",
    "Model",
    "ModelResponse",
    "NoRunsError",
    "PasshatError",
    "RunContext",
    "RunRecord",
    "Score",
    "ScorerError",
    "Store",
    "Suite",
    "ToolCall",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
    "__version__",
    "account",
    "aggregate",
    "dataset",
    "load_suite",
    "pass_at",
    "pass_at_curve",
    "pass_hat",
    "pass_hat_curve",
]
