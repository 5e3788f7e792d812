"""The grid's cells, made in Python (`_Row.cells_html`, `_ToolRow.cells_html`): the same
markup the template wrote cell by cell before, for every state, run status and count."""

from __future__ import annotations

from typing import Any, cast

from passhat.report.html.facts import _Cell, _Row, _ToolRow
from passhat.report.html.render import _environment

ITEM_CELLS = (
    '{% for cell in row.cells %}<td data-run="{{ cell.run }}" data-cell="{{ cell.state }}"'
    '{% if not cell.counted %} data-status="{{ cell.run_status }}"{% endif %}>'
    "{{ cell.symbol }}</td>{% endfor %}"
)
"""The template's item cells before they were made in Python."""
TOOL_CELLS = (
    '{% for n in tr.calls %}<td data-run="{{ loop.index }}"{% if n == 0 %} class="zero"'
    '{% endif %}>{{ "–" if n is none else n }}</td>{% endfor %}'
)
"""The template's tool cells before they were made in Python."""


def test_item_cells_are_the_template_s() -> None:
    cells = tuple(
        _Cell(run, state, status)
        for run, (state, status) in enumerate(
            (
                (state, status)
                for state in ("found", "missed", "extra", "none")
                for status in ("passed", "failed", "errored", "missing")
            ),
            start=1,
        )
    )
    row = _Row(cast(Any, None), cells)
    made = row.cells_html
    assert 'data-status="errored"' in made and 'data-cell="extra"' in made
    assert made == _environment().from_string(ITEM_CELLS).render(row=row)


def test_tool_cells_are_the_template_s() -> None:
    row = _ToolRow(cast(Any, None), (0, 3, None, 12, 0, None))
    made = row.cells_html
    assert 'class="zero"' in made and ">–<" in made
    assert made == _environment().from_string(TOOL_CELLS).render(tr=row)
