"""passhat: run each evaluation case k times and report pass@1, pass@k and pass^k honestly.

The public surface is small and pinned by a test; the machinery lives in the modules.
"""

from __future__ import annotations

from passhat.accounting import Accounting, CaseAccount, DatasetSummary, Ledger, account
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

__version__ = "0.1.0"

__all__ = [
    "Accounting",
    "CaseAccount",
    "CaseMetrics",
    "DatasetMetrics",
    "DatasetSummary",
    "Ledger",
    "NoRunsError",
    "PasshatError",
    "__version__",
    "account",
    "aggregate",
    "dataset",
    "pass_at",
    "pass_at_curve",
    "pass_hat",
    "pass_hat_curve",
]
