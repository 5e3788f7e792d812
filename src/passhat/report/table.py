"""rich's Table, printed as plain lines when the console shows no style.

A report of 100,000 runs prints some forty small tables (thirty of them one case's
item stability): rich renders each cell through its general machinery (measure,
wrap, pad, shape, style), about 60 µs a cell, most of the time the terminal report
spent printing. When the console writes text only (no colour system: a pipe, a
file, CI logs) and every cell is whole lines of plain text that fit, the lines rich
would print are simple to write directly: each column as wide as its widest line
(within its min and max width), lines justified and padded, rich's own box
characters between cells; titles and captions still go through rich (they wrap).
A table wider than the console takes the widths rich narrows its columns to (its
columns measured from their plain lines, by rich's arithmetic), and
a cell too long for its column is wrapped by rich alone (an item-stability table at
k = 100, its long lists of runs). Anything else (colour, markup, control characters,
a column narrower than its padding, settings not handled here) is rendered by rich
itself.
tests/test_report_table.py checks the two agree on generated tables.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from rich import box
from rich import table as rich_table
from rich.cells import cell_len
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from rich.table import Column

_NOT_PLAIN = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
"""Control, zero-width and direction characters: rich strips or measures them its own
way, so a cell holding one is left to rich."""
_MARKUP = re.compile(r"[\[:]")
"""A str cell is rich markup (and may hold :emoji: codes): one with either is left to rich."""
_RENDERED = re.compile(r"[\[:\x07\x08\x0b\x0c\x0d]")
"""What `console.render_str` changes in a str's text: markup, :emoji: codes and the
control codes rich's Text strips. A cell without any of them is its own plain text."""


def _cell_lines(cell: object) -> list[str] | None:
    """A cell's lines of text (a newline starts one), or None when rich must render it."""
    if isinstance(cell, Text):
        if cell.justify is not None or cell.end != "\n":
            return None
        text = cell.plain
    elif isinstance(cell, str):
        if _MARKUP.search(cell):
            return None
        text = cell
    else:
        return None
    lines = text.split("\n")
    for line in lines:
        if line != line.strip() or _NOT_PLAIN.search(line):
            return None
    if len(lines) > 1 and not all(lines):
        return None  # rich drops a trailing newline: a blank line is left to it
    return lines


def _measured(lines: list[str], max_width: int, extra: int | None) -> Measurement:
    """`Measurement.get` of a cell of plain `lines` (rich.text.Text's measure), inside a
    padding `extra` cells wide (None: no padding)."""
    text = "\n".join(lines)
    split = text.splitlines()
    longest = max((cell_len(line) for line in split), default=0)
    words = text.split()
    inner = Measurement(max((cell_len(w) for w in words), default=longest), longest)
    if extra is not None:
        if max_width - extra < 1:
            inner = Measurement(max_width, max_width)
        else:
            inner = _within(inner, max_width)
            inner = Measurement(inner.minimum + extra, inner.maximum + extra)
            inner = inner.with_maximum(max_width)
    return _within(inner, max_width)


def _within(measured: Measurement, max_width: int) -> Measurement:
    """What `Measurement.get` makes of a renderable's own measure."""
    measured = measured.normalize().with_maximum(max_width)
    return Measurement(0, 0) if measured.maximum < 1 else measured.normalize()


def _justify(line: str, width: int, justify: str) -> str:
    """`line` in `width` cells as rich's `Lines.justify` places it."""
    space = width - cell_len(line)
    if justify == "left":
        return line + " " * space
    if justify == "right":
        return " " * space + line
    before = space // 2
    return " " * before + line + " " * (space - before)


class Table(rich_table.Table):
    """`rich.table.Table`, printed line by line when only its text is shown."""

    _known: list[list[list[str]]] | None = None
    """Each column's cells as plain lines, while `_plain_lines` has rich size the columns
    of a table too wide for the console (`_measure_column` measures them from these)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self._plain_lines(console, options)
        if lines is None:
            yield from super().__rich_console__(console, options)
            return
        widths, grid = lines
        table_width = sum(widths) + self._extra_width
        render_options = options.update(width=table_width, highlight=self.highlight, height=None)
        if self.title:
            yield from self._annotation(
                console,
                render_options,
                self.title,
                self.title_style,
                "table.title",
                self.title_justify,
            )
        new_line = Segment.line()
        for line in grid:
            yield Segment(line)
            yield new_line
        if self.caption:
            yield from self._annotation(
                console,
                render_options,
                self.caption,
                self.caption_style,
                "table.caption",
                self.caption_justify,
            )

    def _annotation(
        self,
        console: Console,
        options: ConsoleOptions,
        text: str | Text,
        style: str | Style | None,
        default: str,
        justify: str,
    ) -> RenderResult:
        """A title or caption, exactly as rich's Table renders it."""
        render_text = (
            console.render_str(text, style=Style.pick_first(style, default), highlight=False)
            if isinstance(text, str)
            else text
        )
        return console.render(render_text, options=options.update(justify=justify))  # type: ignore[arg-type]

    def _simple(self, console: Console, options: ConsoleOptions) -> bool:
        """Settings whose lines are written here (any other: rich renders the table)."""
        top, right, bottom, left = self.padding
        # collapsed padding only where rich's widths and its cells agree: no left pad
        collapse_ok = left <= right and (left == 0 or not self.pad_edge)
        return (
            console.color_system is None
            and not options.legacy_windows
            and not options.ascii_only
            and bool(self.columns)
            and (self.show_header or self.box is None)  # a grid: no header, no box
            and not self.show_footer
            and not self.show_lines
            and not self.leading
            and not self.expand
            and self.width is None
            and self.min_width is None
            and (not self.collapse_padding or collapse_ok)
            and top == 0
            and bottom == 0
            and all(
                c.width is None
                and c.ratio is None
                and c.justify in ("left", "right", "center")
                and c.vertical == "top"
                for c in self.columns
            )
        )

    def _plain_lines(
        self, console: Console, options: ConsoleOptions
    ) -> tuple[list[int], list[str]] | None:
        """The column widths and the lines between title and caption, or None."""
        if not self._simple(console, options):
            return None
        columns = self.columns
        texts: list[list[list[str]]] = []
        for column in columns:
            column_texts = []
            for cell in self._column_cells(column):
                lines = _cell_lines(cell)
                if lines is None:
                    return None
                column_texts.append(lines)
            texts.append(column_texts)
        if not texts[0]:
            return None  # no cell at all: rich sizes the table to the console
        max_width = options.max_width - self._extra_width
        widths = []
        for index, (column, column_texts) in enumerate(zip(columns, texts, strict=True)):
            pad = self._get_padding_width(index)
            width = max(cell_len(line) for lines in column_texts for line in lines) + pad
            if column.min_width is not None:
                width = max(width, column.min_width + pad)
            if column.max_width is not None:
                width = min(width, column.max_width + pad)  # its longer cells wrap
            widths.append(width)
        if max_width < 1 or min(widths) < 1:
            return None
        if sum(widths) > max_width:  # too wide: rich narrows the columns that may wrap,
            # and its widths are taken as they are (a cell too long for one is wrapped
            # by rich, `_cells`), not its whole rendering of every cell
            self._known = texts
            try:
                widths = self._calculate_column_widths(console, options.update_width(max_width))
            finally:
                self._known = None
            pads = map(self._get_padding_width, range(len(widths)))
            if sum(widths) > max_width or any(
                w <= pad for w, pad in zip(widths, pads, strict=True)
            ):
                return None  # a column narrower than its padding: left to rich
        table_width = sum(widths) + self._extra_width
        render_options = options.update(width=table_width, highlight=self.highlight, height=None)
        return widths, self._grid(console, render_options, widths, texts)

    def _measure_column(
        self, console: Console, options: ConsoleOptions, column: Column
    ) -> Measurement:
        """rich's measure of a column, taken from its cells' plain lines when they are known
        (`_known`): rich made each cell a Text (a str's markup parsed) in its padding to
        measure it, twice: sizing the per-case forecast table of a 200-case end report at
        80 columns took 7 ms (3 ms so). The arithmetic is rich's: Text's (longest word, longest line), inside
        the cell's padding (rich.padding), within the column's min and max widths."""
        known = self._known
        if known is None or column.width is not None:
            return super()._measure_column(console, options, column)
        max_width = options.max_width
        if max_width < 1:
            return Measurement(0, 0)
        extra = self._cell_padding(column._index) if any(self.padding) else None
        sizes = [_measured(lines, max_width, extra) for lines in known[column._index]]
        measurement = Measurement(
            max((m.minimum for m in sizes), default=1),
            max((m.maximum for m in sizes), default=max_width),
        ).with_maximum(max_width)
        pad = self._get_padding_width(column._index)
        return measurement.clamp(
            None if column.min_width is None else column.min_width + pad,
            None if column.max_width is None else column.max_width + pad,
        )

    def _cell_padding(self, index: int) -> int:
        """The left and right padding rich gives each cell of column `index` (its
        `_get_cells`: collapsed, none at an edge without `pad_edge`)."""
        _, right, _, left = self.padding
        if self.collapse_padding and index > 0:
            left = max(0, left - right)
        if not self.pad_edge:
            left = 0 if index == 0 else left
            right = 0 if index == len(self.columns) - 1 else right
        return left + right

    def _column_cells(self, column: Column) -> list[RenderableType]:
        """A column's header (when shown) and cells, top to bottom."""
        return [column.header, *column.cells] if self.show_header else list(column.cells)

    def _cells(
        self,
        console: Console,
        options: ConsoleOptions,
        index: int,
        width: int,
        texts: list[list[str]],
    ) -> list[list[str]]:
        """One column's cells as padded lines of `width`; a cell with a line longer than
        the column is wrapped by rich (`render_lines`, as rich's Table does)."""
        column = self.columns[index]
        _, right, _, left = self.padding
        collapsed = self.collapse_padding or (index == 0 and not self.pad_edge)
        pad_left = " " * (0 if collapsed else left)
        last = index == len(self.columns) - 1
        pad_right = " " * (0 if (last and not self.pad_edge) else right)
        inner = width - len(pad_left) - len(pad_right)
        cells = []
        for cell, lines in zip(self._column_cells(column), texts, strict=True):
            if all(cell_len(line) <= inner for line in lines):
                justified = [_justify(line, inner, column.justify) for line in lines]
            else:
                cell_options = options.update(
                    width=inner,
                    justify=column.justify,
                    no_wrap=column.no_wrap,
                    overflow=column.overflow,
                    height=None,
                    highlight=column.highlight,
                )
                rendered = console.render_lines(cell, cell_options, pad=True)
                justified = ["".join(segment.text for segment in line) for line in rendered]
            cells.append([pad_left + line + pad_right for line in justified])
        return cells

    def _grid(
        self,
        console: Console,
        options: ConsoleOptions,
        widths: list[int],
        texts: list[list[list[str]]],
    ) -> list[str]:
        """rich's `Table._render` for cells of plain lines, as strings: a header's lines
        at the bottom of its row, a body cell's at the top."""
        padded_columns = [
            self._cells(console, options, index, width, column_texts)
            for index, (width, column_texts) in enumerate(zip(widths, texts, strict=True))
        ]
        rows: list[list[str]] = []  # each row's lines, cells joined by "\0"
        for index, cells in enumerate(zip(*padded_columns, strict=True)):
            height = max(len(lines) for lines in cells)
            shaped = []
            for width, cell in zip(widths, cells, strict=True):
                blank = [" " * width] * (height - len(cell))
                header = index == 0 and self.show_header
                shaped.append(blank + cell if header else cell + blank)
            rows.append(["\0".join(parts) for parts in zip(*shaped, strict=True)])
        box = self.box
        if box is None:
            return [line.replace("\0", "") for row in rows for line in row]
        edge = self.show_edge
        lines = [box.get_top(widths)] if edge else []
        last_row = len(rows) - 1
        for index, row in enumerate(rows):
            if index == 0:
                left_edge, right_edge, divider = box.head_left, box.head_right, box.head_vertical
            elif index == last_row:
                left_edge, right_edge, divider = box.foot_left, box.foot_right, box.foot_vertical
            else:
                left_edge, right_edge, divider = box.mid_left, box.mid_right, box.mid_vertical
            for line in row:
                joined = line.replace("\0", divider)
                lines.append(left_edge + joined + right_edge if edge else joined)
            if index == 0:
                lines.append(box.get_row(widths, "head", edge=edge))
            elif index != last_row and self.rows[index - 1].end_section:
                lines.append(box.get_row(widths, "row", edge=edge))
        if edge:
            lines.append(box.get_bottom(widths))
        return lines


__all__ = ["Table"]


class Fitted:
    """A report table that is never printed wrong: at its width, or as lines.

    rich fits a table too wide for the console by shrinking its widest columns,
    whatever they hold: at 80 columns in a pipe, a cost became `0.0029…` and the
    `cost/run` column was dropped with its header. Here the numbers (right-justified
    columns without a max width) keep their whole width and never wrap; text columns
    may fold. The table is drawn, and kept only if it shows every character its
    cells and headers hold (rich crops a line it cannot fit: `Beta(1/2, 1/2` at 80
    columns). Otherwise each row is printed as one line of `first cell: header
    value, header value...`, which wraps between words and drops nothing.
    """

    def __init__(self, table: RenderableType) -> None:
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.table
        if not isinstance(table, rich_table.Table):  # some builders give a line of text
            yield table
            return
        if not table.pad_edge and not table.padding[3]:
            # rich measures the last column with its right padding and draws it without:
            # a cell as wide as the column lost its last character (`Beta(1/2, 1/2`).
            # The first column has no left padding to lose, so padding the edges only
            # adds a blank after the last column
            table.pad_edge = True
        numeric = [c.justify == "right" and c.max_width is None for c in table.columns]
        cells = [_texts(console, [c.header, *c.cells]) for c in table.columns]
        if any(column is None for column in cells) or not table.columns:
            yield table
            return
        need = table._extra_width
        for index, (column, texts, number) in enumerate(
            zip(table.columns, cells, numeric, strict=True)
        ):
            assert texts is not None
            if number:
                width = max(cell_len(line) for text in texts for line in text.split("\n"))
            elif column.overflow == "fold":
                width = 1
            else:  # wraps between words
                width = max((cell_len(w) for text in texts for w in text.split()), default=1)
            if column.max_width is not None:
                width = min(width, column.max_width)
            need += max(width, column.min_width or 0) + table._get_padding_width(index)
        if need <= options.max_width:
            for column, number in zip(table.columns, numeric, strict=True):
                column.no_wrap = column.no_wrap or number
            # rich may still crop a line it cannot fit (its last column, most often):
            # the table is drawn here and kept only when it shows every character it holds
            lines = console.render_lines(table, options, pad=False)
            if _shows_all(lines, cells, table.show_header):  # type: ignore[arg-type]
                for line in lines:
                    yield from line
                    yield Segment.line()
                return
        yield from _as_lines(console, options, table, cells)  # type: ignore[arg-type]


def _shows_all(lines: list[list[Segment]], cells: list[list[str]], header: bool) -> bool:
    """Whether the drawn lines hold every visible character of the cells (and headers)."""
    drawn = Counter("".join(segment.text for line in lines for segment in line))
    held = Counter("".join(text for texts in cells for text in texts[0 if header else 1 :]))
    return all(drawn[char] >= count for char, count in held.items() if not char.isspace())


def _texts(console: Console, cells: list[RenderableType]) -> list[str] | None:
    """The plain text of each cell (markup rendered), or None for a cell that is not text."""
    out = []
    for cell in cells:
        if isinstance(cell, Text):
            out.append(cell.plain)
        elif isinstance(cell, str):
            # rendering a cell (markup, emoji, highlighting) to read back its text took a
            # quarter of the end report's printing: only a cell it would change is rendered
            out.append(console.render_str(cell).plain if _RENDERED.search(cell) else cell)
        else:
            return None
    return out


def _as_lines(
    console: Console, options: ConsoleOptions, table: rich_table.Table, cells: list[list[str]]
) -> RenderResult:
    """The table as a title, one line per row, and a caption, each wrapping between words."""
    parts: list[RenderableType] = []
    if table.title:
        parts.append(table.title if isinstance(table.title, Text) else Text(str(table.title)))
    headers = [" ".join(texts[0].split()) for texts in cells] if table.show_header else None
    for row in range(table.row_count):
        values = [" ".join(texts[row + 1].split()) for texts in cells]
        if headers is None:
            parts.append(Text("  ".join(v for v in values if v)))
            continue
        rest = ", ".join(
            f"{header} {value}"
            for header, value in zip(headers[1:], values[1:], strict=True)
            if value
        )
        first = values[0] or headers[0]
        parts.append(Text(f"{first}: {rest}" if rest else first))
    if table.caption:
        parts.append(table.caption if isinstance(table.caption, Text) else Text(str(table.caption)))
    for part in parts:
        yield from console.render(part, options)


def titled_table(
    title: Text | str | None, caption: Text | str | None = None, **options: Any
) -> Table:
    """A report's table in its one look: a rule under the header, no outer edge, the title
    and the caption on the left (`options` add to it: padding, show_edge)."""
    if caption is not None:
        options.update(caption=caption, caption_justify="left")
    return Table(box=box.SIMPLE_HEAD, pad_edge=False, title=title, title_justify="left", **options)
