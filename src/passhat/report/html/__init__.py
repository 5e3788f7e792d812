"""The HTML report: one self-contained page per experiment.

The page shows what the terminal report shows (header, accounting, the three
numbers, item stability, tool use) and what a terminal cannot: a run × item
grid per case that makes "sometimes missed" and "always missed" visible at a
glance, curves of pass@j and pass^j, and every run's transcript one click away.

Nothing is computed differently from the terminal report: the accounting is
`experiment_accounting`, the figures and their j come from `Accounting.dataset`,
the items from `item_stability`, tool use from `tool_profile`, the curves from
`pass_at_curve` / `pass_hat_curve`, the intervals from `passhat.stats`. This
package only arranges them.

Safety: model output, tool results and case files are data. Jinja autoescapes
every value; JSON inside `<script>` has `<`, `>` and `&` escaped; transcripts,
and the cases of the pages the script draws, are drawn with `textContent` and
`setAttribute`, never as markup; direction characters (bidi overrides, isolates,
marks) and invisible ones (zero-width space, tags: console.HIDDEN) are shown as their
escapes, `\\u202e`, by the template (render.shown) and the script alike, as the terminal shows them; and a Content-Security-Policy lets only the
page's own script (by its hash) run, and fetches nothing.

Size: runs repeat themselves (the system prompt and the ticket in every run,
the model's annotations in the transcript, the tool calls and the final state),
so the runs travel as JSON with a table of repeated strings, deflated and
base64-encoded, and are unpacked in the browser when a run is opened. A
200-case × 10-run experiment of 23 MB of run data makes a page of about 4.0 MB.
Past `PAGED_ABOVE` cases or `PAGED_ABOVE_RUNS` runs the page holds pages of
cases (at most `PAGE_CASES` cases and `PAGE_RUNS` runs each): the first as
markup, the others as columns of facts (`_cases_blob`: about 12 bytes a case at
k = 1, 34 at k = 10, 290 at k = 100, compressed) that the page's script draws
from when the reader turns to them; the run detail of the first pages, one blob
per page, within `EMBEDDED_RUNS` requested runs and `RUNS_BUDGET` bytes (the page says
above its grid whose runs it carries and which commands show the others). Anchors are the case's number (`c3`,
`c3-run1`), not its id, and each run's entry under the grid (its link target:
status, duration, error) is drawn by the script from the run's grid column.
100,000 runs make a page of 1.1 MB as 1,000 × 100, 1.4 MB as 10,000 × 10 and
1.9 MB as 100,000 × 1 (benchmarks/bench_html.py).

The rooms: facts.py (view models built from the accounting), runs.py (each run's detail,
packed), pages.py (cases cut into pages; the pages past the first as columns of facts),
render.py (the template's context, the script and its CSP hash, `render_html`).
"""

from __future__ import annotations

from passhat.report.html.facts import CONFIDENCE, LIST_LIMIT, LoadRuns, RunWhole
from passhat.report.html.pages import PAGE_CASES, PAGE_RUNS, PAGED_ABOVE, PAGED_ABOVE_RUNS
from passhat.report.html.render import PAIRS_PER_PAGE, WHY_CASES, render_html, write_html
from passhat.report.html.runs import EMBEDDED_RUNS, RUNS_BUDGET, script_json

__all__ = [
    "CONFIDENCE",
    "EMBEDDED_RUNS",
    "LIST_LIMIT",
    "PAGED_ABOVE",
    "PAGED_ABOVE_RUNS",
    "PAGE_CASES",
    "PAGE_RUNS",
    "PAIRS_PER_PAGE",
    "RUNS_BUDGET",
    "WHY_CASES",
    "LoadRuns",
    "RunWhole",
    "render_html",
    "script_json",
    "write_html",
]
