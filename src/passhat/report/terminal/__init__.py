"""Rich tables for the terminal. Every user string enters as `Text`, never as markup.

Every label comes from the catalog in `passhat.report.i18n`, in the `lang` each
function takes (English by default). The rooms: phrases.py (the statistics' words in
`lang`, the cells and bounds every table shares), metrics.py (one experiment's
accounting), uncertainty.py (its intervals and plans), comparison.py (two experiments).
"""

from __future__ import annotations

from passhat.report.terminal.comparison import (
    CASES_SHOWN,
    case_differences_table,
    case_tests_note,
    comparison_panel,
    differences_table,
    interval_methods,
    print_comparison,
    usage_line,
    verdict_sentence,
    verdict_text,
)
from passhat.report.terminal.metrics import (
    accounting_panel,
    metrics_table,
    plan_met_line,
    plan_not_met_line,
    print_metrics,
)
from passhat.report.terminal.phrases import (
    CASE_WIDTH,
    NO,
    ROWS_SHOWN,
    YES,
    case_width,
    panel_title,
    shortfall_line,
    shortfall_lines,
    shown_cases,
)
from passhat.report.terminal.uncertainty import (
    case_forecast_table,
    dataset_intervals_table,
    ledger_panel,
    plans_panel,
    print_uncertainty,
)

__all__ = [
    "CASES_SHOWN",
    "CASE_WIDTH",
    "NO",
    "ROWS_SHOWN",
    "YES",
    "accounting_panel",
    "case_differences_table",
    "case_forecast_table",
    "case_tests_note",
    "case_width",
    "comparison_panel",
    "dataset_intervals_table",
    "differences_table",
    "interval_methods",
    "ledger_panel",
    "metrics_table",
    "panel_title",
    "plan_met_line",
    "plan_not_met_line",
    "plans_panel",
    "print_comparison",
    "print_metrics",
    "print_uncertainty",
    "shortfall_line",
    "shortfall_lines",
    "shown_cases",
    "usage_line",
    "verdict_sentence",
    "verdict_text",
]
