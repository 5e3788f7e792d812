"""Every run's detail for the page: its JSON with a table of repeated strings, deflated and
base64-encoded (`_runs_blob`), one blob per page within `RUNS_BUDGET`; `script_json`,
JSON safe inside `<script>`.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from itertools import chain, compress
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

from markupsafe import Markup

from passhat.plain import named
from passhat.records import RunRecord
from passhat.report.html.facts import LoadRuns, RunWhole, _CaseFacts

RUNS_BUDGET = 750_000
"""Bytes of compressed run detail a paged report embeds at most, page by page; a
run left out says which `passhat show` command prints it."""
EMBEDDED_RUNS = 1_000
"""Requested runs whose detail a paged report embeds at most, page by page (the first
page's always, itself at most `PAGE_RUNS`): each page's runs are read whole, packed and
deflated, about 0.06 s of CPU a page of 1,000 runs. At 100,000 runs the eight pages
`RUNS_BUDGET` let in were 0.5 s of the 1.5 s `report --html` took; the runs of the
other pages are a `passhat show` or `passhat view` away, as the page says above its
grid (render.py `_detail_note`)."""


def _run_data(run: RunRecord) -> dict[str, Any]:
    return {"case": run.case_id, "run": run.run_index, **named(run, _RUN_FIELDS)}


_RUN_FIELDS = (
    "status",
    "transcript",
    "tool_calls",
    "final_state",
    "score",
    "output",
    "retries",
    "duration_s",
    "input_tokens",
    "output_tokens",
    "seed",
)
"""What a page shows of a run beside its case and index, in `_RUN_ENTRY`'s order."""


_RUN_ENTRY = (
    b'"%b-run%d":{"case":%b,"run":%d,"status":%b,"transcript":%b,"tool_calls":%b,'
    b'"final_state":%b,"score":%b,"output":%b,"retries":%b,"duration_s":%b,"input_tokens":%d,'
    b'"output_tokens":%d,"seed":%d}'
)
"""A stored run's entry in the runs blob: its key (anchor, run index) and `_run_data`,
its JSON columns written in as they are."""


def _run_entry(anchor: bytes, index: int, run: RunWhole) -> bytes:
    """`"<anchor>-run<index>":` and the run's detail as the page's script reads it
    (`_run_data`), JSON in UTF-8: a stored run's columns written as the store keeps them,
    never decoded, in one step (key and detail one bytes object, not two joined)."""
    if isinstance(run, RunRecord):
        return b'"%b-run%d":%b' % (anchor, index, _to_json(_run_data(run)))
    duration = run.duration_s
    return _RUN_ENTRY % (
        anchor,
        index,
        _quoted(run.case_id, False),
        run.run_index,
        _quoted(run.status, True),
        run.transcript,
        run.tool_calls,
        run.final_state,
        run.score,
        run.output,
        run.retries,
        _float_json()(duration, inf_nan_mode="null")
        if type(duration) is float
        else _to_json(duration),
        run.input_tokens,
        run.output_tokens,
        run.seed,
    )


@cache
def _float_json() -> Callable[..., bytes]:
    """pydantic-core's `to_json`, imported once when first wanted: a float's JSON as
    `_to_json` writes it, without an import statement per run."""
    from pydantic_core import to_json

    return to_json


def _quoted(value: Any, ascii_only: bool) -> bytes:
    """`json.dumps(value, ensure_ascii=ascii_only)` in UTF-8; a str through the encoder's
    own C function (what json.dumps calls for one, without its Python layers)."""
    if type(value) is not str:
        return json.dumps(value, ensure_ascii=ascii_only).encode()
    return (encode_basestring_ascii(value) if ascii_only else encode_basestring(value)).encode()


def _to_json(value: Any) -> bytes:
    """JSON (UTF-8) as the store writes its columns: what is not JSON as its str(), an
    infinite or NaN number as null (the page's JSON.parse knows neither), and what even
    that cannot write (a lone surrogate) made safe first."""
    from pydantic_core import to_json

    try:
        return to_json(value, fallback=str, inf_nan_mode="null")
    except (ValueError, RecursionError):  # PydanticSerializationError is a ValueError
        from passhat.store import json_safe

        return to_json(json_safe(value), inf_nan_mode="null")


_INTERN_MIN = 32
"""Shorter strings (bytes of JSON text) are cheaper inline than as a reference."""
_BACKSLASH, _QUOTE = b"\x01", b"\x02"
"""An escaped backslash and an escaped quote while `_packed` reads JSON text: bytes that
valid JSON never holds raw, so every quote left bounds a string."""
_KEY_AFTER = re.compile(rb"\s*:")
"""What follows a key's closing quote (JSON's whitespace, then a colon)."""
_ANY_STRING = re.compile(rb'"([^"]*+)"(\s*:)?')
_ESCAPED = re.compile(rb'\\[\\"]')
_NUL = re.compile(rb"\\u0000")
"""An escaped backslash or quote; an escaped U+0000 (`_packed` asks whether a string
starts with one). Each a regular expression: `bytes.find` of these (`in`) took four
times as long over a page's runs, and one expression for both ten times as long."""


def _packed(runs: bytes) -> bytes:
    """`{"strings": [...], "runs": runs}` with every long string value of the JSON
    object `runs` that occurs more than once replaced by a reference into the table,
    `"\\u0000<n>"`; a real value starting with U+0000 has it doubled. Keys are left
    as they are (the page's script reads values only). Whole: `_packed_parts` of it
    joined (the page deflates the parts as they come)."""
    return b"".join(_packed_parts(runs))


def _packed_parts(runs: bytes) -> Iterator[bytes]:
    """`_packed(runs)` in parts, in order, never whole: `_spliced`'s parts of the body,
    each let go once the compressor has read it. The whole packed text, and its copies
    as escapes were put back, were a page's run detail held three times over (+6 MB of
    the peak RSS of `report --html` at 10,000 x 10).

    Equal strings have equal JSON text (one encoder wrote both), so the table is made
    from the text, found by its quotes (`_packed_plain`), without decoding it: escaped
    backslashes and quotes are set aside first (`_BACKSLASH`, `_QUOTE`), and put back
    part by part (each a single byte: no part splits one)."""
    # often neither an escaped backslash nor quote: then nothing to set aside
    escaped = _ESCAPED.search(runs) is not None
    text = runs.replace(b"\\\\", _BACKSLASH).replace(b'\\"', _QUOTE) if escaped else runs
    del runs  # a caller's temporary (as `_runs_blob` gives it) is let go here
    if any(text[m.start() - 1 : m.start()] == b'"' for m in _NUL.finditer(text)):
        body, table = _packed_nul(text)
        del text
        parts: Iterator[bytes] = iter([body])
        del body
    else:
        held = [text]
        del text  # `_packed_plain` lets it go once it is spliced (a page's 4.6 MB)
        parts, table = _packed_plain(held)
    head = b"".join([b'{"strings":[', b",".join(table), b'],"runs":'])
    del table
    for part in chain([head], parts, [b"}"]):
        yield part.replace(_QUOTE, b'\\"').replace(_BACKSLASH, b"\\\\") if escaped else part


def _packed_plain(held: list[bytes]) -> tuple[Iterator[bytes], list[bytes]]:
    """`_packed`'s body (in parts: `_spliced`) and table when no string starts with U+0000
    (the usual): every quote of `text` bounds a string (escaped ones set aside), so the
    strings are found at once from the quotes' positions (numpy): each long one
    (`_INTERN_MIN`) not followed by a colon is a value, and those that occur more than
    once, in order of first occurrence, make the table. Only the long values are sliced
    out (a page's 177,000 strings, 26,000 of them long: 16 ms, not the 20 ms of a
    regular expression that stepped over every string). The text is taken from `held`
    and held by the parts until the last is made."""
    import numpy as np

    text = held.pop()
    codes = np.frombuffer(text, dtype=np.uint8)
    quotes = _quotes(codes)
    pairs = len(quotes) // 2
    opens, closes = quotes[0 : 2 * pairs : 2], quotes[1 : 2 * pairs : 2]
    long = closes - opens > _INTERN_MIN  # the text between holds _INTERN_MIN bytes or more
    opens, ends = opens[long], closes[long] + 1
    after = codes[np.minimum(ends, len(codes) - 1)]  # the last byte, a quote: no key
    key = after == _COLON
    for n in np.flatnonzero(_spaces()[after]).tolist():  # a colon past spaces (rare)
        key[n] = _KEY_AFTER.match(text, int(ends[n])) is not None
    starts, stops = opens[~key].tolist(), ends[~key].tolist()
    del codes, quotes, opens, closes, ends, after, key
    values = list(map(text.__getitem__, map(slice, starts, stops)))
    table = [value for value, n in Counter(values).items() if n > 1]
    refs = {value: b'"\\u0000%d"' % i for i, value in enumerate(table)}
    got = list(map(refs.get, values))  # a value's reference, or None: kept as it is
    del values, refs
    cut_from, cut_to = list(compress(starts, got)), list(compress(stops, got))
    return _spliced(text, cut_from, cut_to, [ref for ref in got if ref is not None]), table


_SPLICE_STEP = 2_048
"""References `_spliced` puts into the text per part."""


def _spliced(
    text: bytes, cut_from: list[int], cut_to: list[int], refs: list[bytes]
) -> Iterator[bytes]:
    """`text` with each span `cut_from[i]:cut_to[i]` replaced by `refs[i]`, in parts of
    `_SPLICE_STEP` references: the text before each reference and the reference,
    sliced and joined in C a part at a time."""
    begins, ends = [0, *cut_to], [*cut_from, len(text)]
    for at in range(0, len(begins), _SPLICE_STEP):
        cut = slice(at, at + _SPLICE_STEP)
        between = list(map(text.__getitem__, map(slice, begins[cut], ends[cut])))
        put = refs[cut]  # one fewer than `between` in the last part
        pieces: list[bytes] = [b""] * (len(between) + len(put))
        pieces[0::2], pieces[1::2] = between, put
        del between
        yield b"".join(pieces)


_QUOTE_BYTE, _COLON = ord('"'), ord(":")
_QUOTES_STEP = 1 << 18
"""Bytes of text looked at a time for quotes (`_quotes`)."""


def _quotes(codes: Any) -> Any:
    """The positions of the quotes in `codes` (the text's bytes as a numpy array), looked
    for a quarter of a megabyte at a time: no mask as large as the text, whose pages
    (mapped anew for each page's text) added 5 MB to the peak RSS of `report --html`."""
    import numpy as np

    kind = np.int32 if len(codes) < 2**31 else np.int64
    return np.concatenate(
        [
            np.flatnonzero(codes[at : at + _QUOTES_STEP] == _QUOTE_BYTE).astype(kind) + at
            for at in range(0, len(codes), _QUOTES_STEP)
        ]
        or [np.zeros(0, dtype=kind)]
    )


@cache
def _spaces() -> Any:
    """Per byte, whether `\\s` matches it (bytes: space, tab, LF, CR, VT, FF)."""
    import numpy as np

    space = np.zeros(256, dtype=bool)
    space[list(b" \t\n\r\x0b\x0c")] = True  # what `\s` matches in bytes
    return space


def _packed_nul(text: bytes) -> tuple[bytes, list[bytes]]:
    """`_packed`'s body and table for text in which a string starts with U+0000 (rare):
    every string read, so that each such value is doubled."""
    values = [m[0] for m in _ANY_STRING.finditer(text) if not m[2]]
    counts = Counter(v for v in values if len(v) >= _INTERN_MIN + 2)
    table = [value for value, n in counts.items() if n > 1]
    refs = {value: b'"\\u0000%d"' % i for i, value in enumerate(table)}

    def value(match: re.Match[bytes]) -> bytes:
        string = match[0]
        if match[2]:
            return string
        if string in refs:
            return refs[string]
        return b'"\\u0000' + string[1:] if string.startswith(b'"\\u0000') else string

    return _ANY_STRING.sub(value, text), table


def _runs_blob(
    cases: Sequence[_CaseFacts], load: LoadRuns | None, room: int | None = None
) -> str | None:
    """Every recorded run's heavy fields, keyed by anchor, for the page's script; None
    when the blob would be longer than `room` (characters), told as soon as it is.

    Runs repeat themselves (the system prompt and the ticket in every run, the
    model's annotations in the transcript, the tool calls and the final state),
    so long repeated strings go into one table (`_packed`), and the JSON is deflated
    and base64-encoded: about a tenth of the raw size.
    """
    parts = _packed_parts(_runs_text(cases, _whole(cases, load)))
    deflated = _deflated(parts, None if room is None else room // 4 * 3)
    return None if deflated is None else base64.b64encode(deflated).decode("ascii")


_DEFLATE_STEP = 1 << 16
"""Bytes fed to the compressor at a time when a blob may not fit (`_deflated`)."""


def _deflated(parts: Iterable[bytes], most: int | None) -> bytes | None:
    """`zlib.compress(b"".join(parts), 9)`, or None as soon as its output is longer than
    `most` bytes: fed a part, and a step of a part, at a time, the compressor writes the
    same bytes (no flush between steps), and the output so far only grows. The page
    after the last that fits in `RUNS_BUDGET` is compressed only until it is seen not
    to fit.

    Level 9, not less: `RUNS_BUDGET` counts compressed bytes, so a lower level embeds
    fewer runs' detail. At 10,000 x 10 the nine pages tried deflate to 623,418 bytes at
    level 9 or 8 (0.13 s), 711,561 at 6 (0.08 s), 1,076,255 at 1; at 1,000 x 100 to
    597,187, 667,749 and 1,006,278: at 6 the eighth page no longer fits."""
    packer = zlib.compressobj(9)
    out: list[bytes] = []
    size = 0
    for part in parts:
        view = memoryview(part)
        for at in range(0, len(part), _DEFLATE_STEP):
            out.append(packer.compress(view[at : at + _DEFLATE_STEP]))
            size += len(out[-1])
            if most is not None and size > most:
                return None
        del view, part
    out.append(packer.flush())
    return None if most is not None and size + len(out[-1]) > most else b"".join(out)


def _runs_text(cases: Sequence[_CaseFacts], whole: dict[tuple[str, int], RunWhole]) -> bytes:
    """`{"<anchor>-run<n>": <run>, ...}` of the runs of `cases` in `whole`, which is emptied
    as it is read: a page's runs are held about twice at most (rows, then pieces, then
    the joined text, each let go as the next is made)."""
    pop = whole.pop
    pieces = [  # each row let go once written
        _run_entry(c.anchor.encode(), index, run)
        for c in cases
        for index in range(1, c.account.k_requested + 1)
        if (run := pop((c.account.case, index), None)) is not None
    ]
    whole.clear()
    if not pieces:
        return b"{}"
    pieces[0] = b"{" + pieces[0]
    pieces[-1] += b"}"
    return b",".join(pieces)


def script_json(value: Any) -> Markup:
    """JSON safe inside `<script type="application/json">`: no `</script>`, no `<!--`."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def _whole(page: Sequence[_CaseFacts], load: LoadRuns | None) -> dict[tuple[str, int], RunWhole]:
    """The whole runs of the cases of `page`: their own records when they are whole, else
    what `load` reads of them."""
    given: list[RunWhole] = [r for c in page for r in c.runs.values() if isinstance(r, RunRecord)]
    cases = [c.account.case for c in page]
    if not given and load is not None and cases:
        given = list(load(cases))
    return {(r.case_id, r.run_index): r for r in given}


def _embedded_runs(pages: list[list[_CaseFacts]], load: LoadRuns | None) -> list[tuple[int, str]]:
    """The runs blobs, each with the number of its first case: every run on one page; on
    a paged report one blob per page while their requested runs stay within
    `EMBEDDED_RUNS` and their compressed detail within `RUNS_BUDGET` (the first page's
    always), so no more than one page's whole runs are held at a time and the page's
    script inflates only the blob of the run opened."""
    chunks: list[tuple[int, str]] = []
    size = runs = 0
    for page in pages:
        runs += sum(c.account.k_requested for c in page)
        if chunks and runs > EMBEDDED_RUNS:
            break
        blob = _runs_blob(page, load, RUNS_BUDGET - size if chunks else None)
        if blob is None:
            break
        size += len(blob)
        chunks.append((page[0].number, blob))
    return chunks
