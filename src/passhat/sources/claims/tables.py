"""Claims of tables: markdown tables (any alignment row, with or without outer
pipes) and LaTeX `tabular`, whose header names a unit (a row claims its count for its
first cell) or a pass^k figure (at least k runs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from passhat.sources.claims.found import Claim
from passhat.sources.claims.grammar import FIGURE_RULES
from passhat.sources.claims.numbers import number
from passhat.sources.claims.sentences import sentence
from passhat.sources.claims.vocabulary import (
    COUNT_NOUNS,
    FOREIGN_COUNT_NAMES,
    INDEX_NOUNS,
    nouns,
)


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*`_ ") for c in line.strip().strip("|").split("|")]


def is_separator(line: str) -> bool:
    """A markdown table's alignment row (`|---|:--:|`, with or without outer pipes)."""
    if "-" not in line:
        return False
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return bool(cells) and all(re.fullmatch(r":?-+:?", c) for c in cells)


_COLUMN = re.compile(
    r"^(?:(?:#|n|num\.?|number|no\.?|nb\.?)?\s*(?:of\s+)?[_ ]?\s*"
    r"(?:"
    + nouns(COUNT_NOUNS, "plural")
    + r"|k|(?:eval(?:uation)?|test|bench(?:mark)?)[_ ]"
    + nouns(INDEX_NOUNS, "plural")
    + r")(?:\s+used)?|(?:n|k|#)\s*\(\s*"
    + nouns(COUNT_NOUNS, "plural")
    + r"\s*\)|"
    + FOREIGN_COUNT_NAMES
    + r")(?:\s*\(\s*(?:n|#|k)\s*\))?(?:\s*(?:/|per|for\s+each)\s*[\w-]+)?$",
    re.I,
)


_RUN_COLUMN = re.compile(nouns(INDEX_NOUNS, "singular") + r"\s*[#_-]?\s*(\d{1,9})", re.I)
_RUN_INDEX = re.compile(
    nouns(tuple(n for n in INDEX_NOUNS if n != "seed"), "singular") + r"(?:\s*#|\s+no\.?)?", re.I
)
"""A column of run indices ("Run", "Trial #"); not "Seed" (a seed's value, 42, is no index)."""


def _header_claims(cells: list[str], where: str, quote: str) -> Iterator[Claim]:
    """A pass^k header claims at least k runs; columns "Run 1 | Run 2 | Run 3" claim one
    run each."""
    per_run = {m.group(1) for c in cells if (m := _RUN_COLUMN.fullmatch(c.strip()))}
    if len(per_run) >= 2:
        yield Claim(
            len(per_run), where, quote, written=str(len(per_run)), rule="table per-run columns"
        )
    for cell in cells:
        for rule in FIGURE_RULES[:2]:
            match = rule.pattern.fullmatch(cell.strip())
            if match and (k := number(match.group("num"))):
                yield Claim(
                    k, where, quote, True, written=match.group("num"), rule="table pass^k header"
                )


_RANGE_CELL = re.compile(r"(\d{1,9})\s*[-–]\s*\d{1,9}")
_TIMES_CELL = re.compile(
    r"(?:[x×]\s*(?P<before>\d{1,9})|(?P<after>\d{1,9})\s*(?:[x×]|"
    + nouns(COUNT_NOUNS, "plural")
    + r"|times))(?:\s*\([^()]{0,40}\))?",
    re.I,
)
"""A cell that is a count with its sign or unit: "3×", "×3", "x5", "3 runs", "5 seeds (0–4)"."""
_VALUE = re.compile(r"[-+]?\d{1,9}(?:[.,]\d{1,9})?%?")
_LISTED = re.compile(nouns(INDEX_NOUNS, "plural") + r"|replicates", re.I)
"""A column whose cells may list one value a run ("seeds: 0.60, 0.63, 0.61"): a unit of
runs, not `k` (pass@k at 1, 5, 10) nor `epochs` (a schedule)."""


def _count_cell(cell: str, header: str) -> int | None:
    """A cell's count: digits, a count with its sign or unit ("3×", "x3", "3 runs"), or a
    range read at its lower bound ("5–10": 5); under a
    column of runs or seeds, a list of values one a run ("0.60, 0.63, 0.61": 3;
    "0.40; 0.50": 2, a semicolon first, where a comma may be a decimal comma)."""
    if cell.isascii() and cell.isdigit():
        return number(cell)
    match = _RANGE_CELL.fullmatch(cell)
    if match:
        return number(match.group(1))
    times = _TIMES_CELL.fullmatch(cell)
    if times:
        return number(times.group("before") or times.group("after"))
    if not _LISTED.search(header):
        return None
    items = [i.strip() for i in cell[:2000].split(";" if ";" in cell else ",")]
    if len(items) >= 2 and all(_VALUE.fullmatch(i) for i in items):
        return number(str(len(items)))
    return None


def _run_rows(
    header: list[str], rows: list[tuple[int, list[str]]], name: str, lines: list[str]
) -> Iterator[Claim]:
    """A table whose first column is a run's index ("Run", "Trial #") and whose rows
    number 1, 2, 3: one run a row."""
    if not header or not _RUN_INDEX.fullmatch(header[0].strip()):
        return
    indices = {c[0].strip() for _, c in rows if c and c[0].strip().isdigit()}
    if len(indices) >= 2:
        line_no = rows[0][0]
        yield Claim(
            len(indices),
            f"{name}:{line_no}",
            sentence(lines[line_no - 2], 0, 0),
            written=str(len(indices)),
            rule="table of runs",
        )


def _rows(
    header: list[str], rows: list[tuple[int, list[str]]], name: str, lines: list[str], rule: str
) -> Iterator[Claim]:
    columns = [i for i, h in enumerate(header) if _COLUMN.match(h.strip())]
    for line_no, cells in rows:
        for column in columns:
            cell = cells[column].strip().strip("*`_ ") if column < len(cells) else ""
            if (k := _count_cell(cell, header[column])) is not None:
                scope = cells[0].strip() if column != 0 and cells[0].strip() else None
                yield Claim(
                    k,
                    f"{name}:{line_no}",
                    sentence(lines[line_no - 1], 0, 0),
                    scope=scope,
                    written=cell,
                    rule=rule,
                )


def markdown_tables(lines: list[str], name: str) -> Iterator[Claim]:
    """Claims of markdown tables: a header row, an alignment row (`---`, `:--`, `--:`,
    with or without outer pipes), then rows while lines hold a `|`."""
    for index in range(len(lines) - 1):
        if "|" not in lines[index] or not is_separator(lines[index + 1]):
            continue
        header = _cells(lines[index])
        yield from _header_claims(header, f"{name}:{index + 1}", sentence(lines[index], 0, 0))
        rows = []
        for row in range(index + 2, len(lines)):
            if "|" not in lines[row]:
                break
            rows.append((row + 1, _cells(lines[row])))
        yield from _rows(header, rows, name, lines, "table column")
        yield from _run_rows(header, rows, name, lines)


_LATEX_CELL = re.compile(
    r"\\(?:textbf|textit|emph|text|mathrm|multicolumn\{\d+\}\{\w+\})\{([^{}]*)\}"
)


def _latex_cells(line: str) -> list[str]:
    line = re.sub(r"\\\\.*$", "", line)
    line = re.sub(r"\\(?:toprule|midrule|bottomrule|hline|cline\{[^}]*\})", "", line)
    line = _LATEX_CELL.sub(r"\1", line).replace("\\#", "#").replace("$", "")
    return [c.strip() for c in line.split("&")]


_COLUMN_GROUP = re.compile(
    r"\\{1,2}multicolumn\{(?P<num>\d{1,9})\}\{[^{}]*\}\{\s*(?:\\{1,2}\w+\s*\{)?\s*"
    + nouns(INDEX_NOUNS, "plural")
    + r"\s*\}?\s*\}",
    re.I,
)
"""A header spanning one column a run: `\\multicolumn{5}{c}{\\textsc{Seeds}}` (its
backslashes doubled in a script's string too)."""


def column_groups(lines: list[str], name: str) -> Iterator[Claim]:
    """A LaTeX header's column group of runs or seeds claims one run a column: in a
    `tabular` of a write-up, or in a script's string that writes one."""
    for index, line in enumerate(lines):
        if "multicolumn" not in line:
            continue
        for match in _COLUMN_GROUP.finditer(line):
            k = number(match.group("num"))
            if k is not None and k >= 2:
                yield Claim(
                    k,
                    f"{name}:{index + 1}",
                    sentence(line, 0, 0),
                    written=match.group("num"),
                    rule="LaTeX table column group",
                )


def latex_tables(lines: list[str], name: str) -> Iterator[Claim]:
    """Claims of LaTeX `tabular` environments: the first row with `&` is the header."""
    index = 0
    while index < len(lines):
        if "\\begin{tabular" not in lines[index]:
            index += 1
            continue
        header: list[str] | None = None
        rows = []
        index += 1
        while index < len(lines) and "\\end{tabular" not in lines[index]:
            if "&" in lines[index]:
                cells = _latex_cells(lines[index])
                if header is None:
                    header = cells
                    yield from _header_claims(
                        cells, f"{name}:{index + 1}", sentence(lines[index], 0, 0)
                    )
                else:
                    rows.append((index + 1, cells))
            index += 1
        if header:
            yield from _rows(header, rows, name, lines, "LaTeX table column")
