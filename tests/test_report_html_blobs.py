"""The HTML report's blobs made without decoding (issue 29): the table of repeated strings
read from JSON text, the run detail of stored runs as the store keeps it, front coding of
ASCII strings all at once, and the pages' items read straight into columns. Each is
checked against the slower, obvious way it replaced."""

from __future__ import annotations

import gzip
import json
import random
import re
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from page_data import resolved
from passhat.analysis import item_stability
from passhat.errors import StoreError
from passhat.records import RunRecord, RunSummary
from passhat.report.html import facts as html_facts
from passhat.report.html import pages as html_pages
from passhat.report.html import render as html_render
from passhat.report.html import render_html
from passhat.report.html import runs as html_runs
from passhat.store import Store
from test_report_html import errored, experiment, run, unpack_runs

HOSTILE = [
    "",
    "x" * 40,
    "\x00" + "y" * 40,
    "\x00",
    "\x00\x00short",
    'he said "stop" and left, then came back to say it again',
    "back\\slash " * 5,
    "\\",
    '\\\\"',
    "</script><script>alert(1)</script><!-- model output, not markup -->",
    "étoile 星 🙂 " * 6,
    "\u2028\u2029 line separators, twice over, and more",
    'ends in a quote"',
    "ends in a backslash\\",
    "a:b,c:[d]{e}" * 4,
]


def unpacked(packed: bytes) -> Any:
    """`_packed`'s output as the page's script reads it: references resolved, a doubled
    U+0000 undone."""
    data = json.loads(packed)
    return resolved(data["runs"], data["strings"])


def round_trip(value: dict[str, Any], ensure_ascii: bool = False) -> dict[str, Any]:
    packed = html_runs._packed(json.dumps(value, ensure_ascii=ensure_ascii).encode())
    assert unpacked(packed) == value
    data: dict[str, Any] = json.loads(packed)
    return data


def test_the_string_table_round_trips_hostile_strings() -> None:
    """Repeated, empty, unicode, escaped, NUL-started strings and `</script>` come back
    as they were; keys (even long ones equal to a value) are never references."""
    value = {text or "empty": [text, {"again": text}, text] for text in HOSTILE}
    value["x" * 40] = ["x" * 40, "x" * 40]  # a long key equal to a repeated value
    for ensure_ascii in (False, True):
        data = round_trip(value, ensure_ascii)
        assert "x" * 40 in data["runs"]  # the key as it was
        assert "x" * 40 in data["strings"] and "" not in data["strings"]
        assert all(len(s.encode()) >= html_runs._INTERN_MIN for s in data["strings"])


def test_only_long_repeated_values_are_referenced() -> None:
    data = round_trip({"a": "y" * 40, "b": "z" * 40, "c": "z" * 40, "d": "short", "e": "short"})
    assert data["strings"] == ["z" * 40]
    assert data["runs"]["a"] == "y" * 40 and data["runs"]["d"] == "short"


@pytest.mark.parametrize(
    "strings",
    [
        ["\x00" + "n" * 40, "\x00" + "n" * 40, "a\x00" + "m" * 40],  # NUL escapes alone
        ["line\nbreak" * 4, "line\nbreak" * 4],  # escapes, none of a backslash or quote
        ['say "hi" ' * 5, "\x00" + 'say "hi" ' * 5, 'say "hi" ' * 5],  # quotes and NUL
    ],
)
def test_the_string_table_tells_each_kind_of_escape_apart(strings: list[str]) -> None:
    """Which escapes a text holds decides how it is read (an escaped backslash or quote
    set aside first; a string starting with U+0000 read string by string): found by
    regular expressions, not `bytes.find`, and each kind alone round-trips."""
    for ensure_ascii in (False, True):
        round_trip({str(i): text for i, text in enumerate(strings)}, ensure_ascii)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(HOSTILE) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(HOSTILE) | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=6))
def test_the_string_table_round_trips_any_json(value: dict[str, Any]) -> None:
    round_trip(value)
    round_trip(value, ensure_ascii=True)


_LONG_VALUES = re.compile(
    rb'((?:[^"]*+"(?:[^"]{0,%d}+"|[^"]*+"(?=\s*:)))*+[^"]*+)("[^"]*+"|\Z)'
    % (html_runs._INTERN_MIN - 1)
)
"""What `_packed` read JSON text with before it found strings by their quotes: what comes
before a long string value (structure, short strings, keys), and that value."""


def packed_by_expression(runs: bytes) -> bytes:
    """`_packed` as it was, by one regular expression over the text: the slower way its
    bytes are checked against."""
    escaped = b"\\\\" in runs or b'\\"' in runs
    text = runs.replace(b"\\\\", b"\x01").replace(b'\\"', b"\x02") if escaped else runs
    if any(text[m.start() - 1 : m.start()] == b'"' for m in re.finditer(rb"\\u0000", text)):
        body, table = html_runs._packed_nul(text)
    else:
        pieces = _LONG_VALUES.split(text)
        values = pieces[2::3]
        table = [value for value, n in Counter(values).items() if n > 1 and value]
        refs = {value: b'"\\u0000%d"' % i for i, value in enumerate(table)}
        pieces[2::3] = [refs.get(value, value) for value in values]
        body = b"".join(pieces)
    packed = b"".join([b'{"strings":[', b",".join(table), b'],"runs":', body, b"}"])
    return packed.replace(b"\x02", b'\\"').replace(b"\x01", b"\\\\") if escaped else packed


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=6), st.booleans(), st.booleans())
def test_the_string_table_is_what_the_regular_expression_made(
    value: dict[str, Any], ensure_ascii: bool, spaced: bool
) -> None:
    """`_packed` finds strings by their quotes (numpy), not by a regular expression that
    stepped over each: the same bytes, keys (a colon after spaces too) never referenced."""
    separators = (", ", ": ") if spaced else (",", ":")
    text = json.dumps(value, ensure_ascii=ensure_ascii, separators=separators).encode()
    assert html_runs._packed(text) == packed_by_expression(text)


@pytest.mark.parametrize("step", [1, 2, 3])
def test_the_packed_text_is_the_same_whatever_its_parts(
    step: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`_packed_parts` splices the references in `_SPLICE_STEP` at a time and puts the
    escapes back part by part: joined, the same bytes as the text packed at once, and
    deflated part by part the same blob."""
    rng = random.Random(step)
    words = ['quote \\" and backslash \\\\ here', "plain text long enough to be kept", "\u202e"]
    long = [" ".join(rng.choice(words) for _ in range(6)) for _ in range(8)]
    value = {f"r{n}": [rng.choice(long) for _ in range(rng.randint(0, 5))] for n in range(40)}
    text = json.dumps(value, ensure_ascii=False).encode()
    whole = packed_by_expression(text)
    monkeypatch.setattr(html_runs, "_SPLICE_STEP", step)
    parts = list(html_runs._packed_parts(text))
    assert len(parts) > 3 and b"".join(parts) == whole == html_runs._packed(text)
    assert html_runs._deflated(parts, None) == zlib.compress(whole, 9)


def test_the_string_table_of_long_keys_and_spaced_colons() -> None:
    """A long key before a colon (after spaces, tabs or line breaks), a long repeated value
    followed by spaces and a comma, and a long value last in the text: the same bytes as
    the regular expression made (it failed on the quotes' positions taken one apart)."""
    long = "k" * 40
    for text in [
        b'{"%b" \t\n: "%b" , "a": "%b" ,"%b":1}' % ((long.encode(),) * 4),
        b'["%b", "%b"]' % ((long.encode(),) * 2),
        b'"%b"' % long.encode(),
        b"",
    ]:
        assert html_runs._packed(text) == packed_by_expression(text)


def test_stored_runs_embed_as_whole_records_do(tmp_path: Path) -> None:
    """`Store.runs_json` (columns as stored, never decoded) gives the page the same run
    detail as whole records; model output stays data (no `</script>` in the page)."""
    ids = ["a", "b"]
    e = experiment(ids, k=2)
    runs = [
        replace(
            run(case, i, ["AC1:x", "AC2:y"], ["AC1:x"]),
            output=HOSTILE[i + 7],
            final_state={"note": HOSTILE[2], "twice": [HOSTILE[10], HOSTILE[10]]},
            duration_s=0.1 + 0.2,
        )
        for case in ids
        for i in (1, 2)
    ]
    with Store(tmp_path / "s.db") as store:
        store.create_experiment(e)
        for r in runs:
            store.record_run(r)
        stored = store.runs(e.id)
        page = render_html(e, store.summaries(e.id), load=lambda c: store.runs_json(e.id, c))
    assert unpack_runs(page) == unpack_runs(render_html(e, stored))
    assert unpack_runs(page)["c1-run2"]["output"] == HOSTILE[9]
    assert "<script>alert(1)" not in page


_THREADS_STARTED = """
import sys, threading
started = []
start = threading.Thread.start
def recorded(self):
    started.append(self.name)
    start(self)
threading.Thread.start = recorded
from passhat.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit_:
    assert not exit_.code, exit_.code
print("STARTED", started)
"""


def test_the_page_command_starts_no_thread(tmp_path: Path) -> None:
    """`passhat report --html` reads its runs with no thread importing meanwhile: once a
    thread has started, SQLite's every row costs more, and the page reads its runs'
    detail after the summaries (3-5 % of its CPU at 100,000 runs). The terminal report
    still imports while SQLite reads."""
    import subprocess
    import sys

    e = experiment(["a", "b"], k=2)
    with Store(tmp_path / "s.db") as store:
        store.create_experiment(e)
        for case in ("a", "b"):
            for i in (1, 2):
                store.record_run(run(case, i, ["AC1:x"], ["AC1:x"]))
    command = ["report", e.id, "--db", str(tmp_path / "s.db")]
    started = {}
    for name, extra in (("page", ["--html", str(tmp_path / "page.html")]), ("report", [])):
        done = subprocess.run(
            [sys.executable, "-c", _THREADS_STARTED, *command, *extra],
            capture_output=True,
            text=True,
            check=True,
        )
        started[name] = done.stdout.rsplit("STARTED", 1)[1].strip()
    assert (tmp_path / "page.html").is_file()
    assert started == {"page": "[]", "report": "['passhat-meanwhile']"}


def test_a_damaged_or_nonstandard_column_is_read_as_runs_reads_it(tmp_path: Path) -> None:
    e = experiment(["a"], k=2)
    with Store(tmp_path / "s.db") as store:
        store.create_experiment(e)
        store.record_run(run("a", 1, ["AC1:x"], ["AC1:x"]))
        store.record_run(run("a", 2, ["AC1:x"], []))
        with store.atomic() as db:  # NaN: JSON to Python, not to the page's JSON.parse
            db.execute("UPDATE runs SET final_state = '{\"v\": NaN}' WHERE run_index = 1")
        (one, two) = store.runs_json(e.id, ["a"])
        assert json.loads(one.final_state) == {"v": None} and json.loads(two.final_state)
        with store.atomic() as db:
            db.execute("UPDATE runs SET transcript = '[not json' WHERE run_index = 2")
        with pytest.raises(StoreError, match="the store is damaged: transcript of run 2"):
            store.runs_json(e.id, ["a"])


@pytest.mark.parametrize("step", [8_192, 1, 2, 3])
def test_ascii_front_coding_at_once_equals_one_at_a_time(
    step: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compared `_ASCII_STEP` strings at a time (a step's first with the last before it)."""
    monkeypatch.setattr(html_pages, "_ASCII_STEP", step)
    rng = random.Random(3)
    for _ in range(500):
        strings = [
            "".join(rng.choice("ab\x00/c") for _ in range(rng.randint(0, 9)))
            for _ in range(rng.randint(1, 15))
        ]
        expected, _ = html_pages._front_coded_loop(strings)
        assert html_pages._shared_ascii(strings) == expected
        assert html_pages._front_coded(strings) == html_pages._front_coded_loop(strings)


def item_oracle(runs: list[RunRecord]) -> list[tuple[str, str, str, str, str]]:
    """The items of a page as `_cases_blob` wrote them before: from `item_stability`."""
    return [
        (s.scorer, s.item, "1" if s.expected else "0", html_pages._hit_letters(s), s.verdict)
        for s in item_stability(runs)
    ]


def graded(rng: random.Random) -> list[dict[str, Any]]:
    """Per-item results, now and then not plain (a label twice, an item twice, numbers)."""
    details = []
    for label in rng.sample(["s1", "s2", "s3"], rng.randint(0, 2)):
        items: list[Any] = rng.sample(["a", "b", "c", "d", 1], rng.randint(0, 4))
        if rng.random() < 0.05:
            items.append(items[0] if items else "a")
        details.append(
            {
                "scorer": "exact_set",
                "path": label if rng.random() < 0.9 else None,
                "expected": items,
                "missing": [i for i in items if rng.random() < 0.3],
                "extra": rng.sample(["x", "y", "z", "a", 2], rng.randint(0, 2)),
            }
        )
    if details and rng.random() < 0.03:
        details.append(dict(details[0]))
    return details


def test_item_columns_equal_item_stability() -> None:
    rng = random.Random(5)
    for _ in range(300):
        ids = [f"c{i}" for i in range(rng.randint(1, 6))]
        shapes = [graded(rng) for _ in range(2)]  # a case's runs mostly share a shape
        runs: list[RunRecord] = []
        for case in ids:
            indices = rng.sample(range(1, 6), rng.randint(0, 5))
            for i in indices:
                if rng.random() < 0.1:
                    runs.append(errored(case, i))
                    continue
                score = rng.choice(shapes) if rng.random() < 0.8 else graded(rng)
                runs.append(replace(run(case, i, [], []), score=score))
        facts = html_facts._case_facts(runs, _accounting(ids, runs))
        columns = html_pages._ItemColumns(Counter())
        columns.add(facts)
        rows = list(zip(columns.names, columns.expected, columns.hits, strict=True))
        scorers = list(columns.scorers)
        oracle = item_oracle(runs)
        assert [scorers[n] for n in columns.scorer] == [o[0] for o in oracle]
        assert rows == [o[1:4] for o in oracle]
        assert columns.verdicts == Counter(o[4] for o in oracle)
        per_case = Counter(s.case for s in item_stability(runs))
        assert columns.counts == [per_case.get(c, 0) for c in ids]
        # as `Store.summaries` gives them: runs with equal items share one value
        shared = html_pages._ItemColumns(Counter())
        shared.add(html_facts._case_facts(sharing(runs), _accounting(ids, runs)))
        assert (shared.scorers, shared.scorer, shared.names) == (
            columns.scorers,
            columns.scorer,
            columns.names,
        )
        assert (shared.expected, shared.hits, shared.counts) == (
            columns.expected,
            columns.hits,
            columns.counts,
        )
        assert shared.verdicts == columns.verdicts


def test_item_columns_compacted_page_by_page_equal_the_columns_whole() -> None:
    """`_ItemColumns.compact` after each page: the names front-coded across the pages as
    if at once (each page's first from the page before's last), the letters joined."""
    rng = random.Random(8)
    for _ in range(100):
        ids = [
            rng.choice(["t-00", "t-01", "\u00efx-", "y"]) + str(n) for n in range(rng.randint(1, 9))
        ]
        runs = [
            replace(run(case, i, [], []), score=graded(rng))
            for case in ids
            for i in range(1, rng.randint(1, 4))
        ]
        facts = html_facts._case_facts(runs, _accounting(ids, runs))
        whole = html_pages._ItemColumns(Counter())
        whole.add(facts)
        paged = html_pages._ItemColumns(Counter())
        for at in range(0, len(facts), 2):  # pages of two cases
            paged.add(facts[at : at + 2])
            paged.compact()
        assert (paged.shared, paged.rest) == html_pages._front_coded(whole.names)
        assert paged.names == [] and len(paged.hits) == (len(facts) + 1) // 2
        assert "".join(paged.expected) == "".join(whole.expected)
        assert "".join(paged.hits) == "".join(whole.hits)
        assert (paged.counts, paged.scorer, paged.verdicts) == (
            whole.counts,
            whole.scorer,
            whole.verdicts,
        )


def sharing(runs: list[RunRecord]) -> list[RunSummary]:
    """`runs` as summaries whose equal per-item results are one value."""
    values: dict[str, Any] = {}
    return [
        RunSummary(
            r.case_id,
            r.run_index,
            r.status,
            None,
            None,
            0.0,
            0,
            0,
            None,
            1,
            None,
            values.setdefault(json.dumps(r.graded_items, sort_keys=True), r.graded_items),
            {},
        )
        for r in runs
    ]


def _accounting(ids: list[str], runs: list[RunRecord]) -> Any:
    from passhat.report.experiment import experiment_accounting

    return experiment_accounting(experiment(ids, k=5), runs)


def test_durations_in_tenths_at_once_equal_one_at_a_time() -> None:
    """Ten times each, rounded, except near a half or far out: as `%.1f` writes them."""
    rng = random.Random(7)
    seconds = [rng.uniform(0, 300) for _ in range(20_000)]
    seconds += [i / 20 for i in range(4_000)] + [i / 100 + 0.05 for i in range(4_000)]
    seconds += [0.0, -0.0, 0.05, 0.15, 0.25, 0.35, -3.25, 1e6 + 0.05, 1e13 + 0.05, 2.0**60]
    assert html_pages._all_tenths(seconds) == [html_pages._tenths(s) for s in seconds]
    assert html_pages._all_tenths([]) == []


def test_items_read_lazily_give_the_pages_they_give_decoded(tmp_path: Path) -> None:
    """`report --html` reads summaries with undecoded items (pydantic-core reads each value
    once, for the pages past the first): the page is the one decoded items give."""
    ids = [f"p{c:03d}" for c in range(html_pages.PAGED_ABOVE + 30)]
    e = experiment(ids, k=2)
    items = ["AC1:conflict", "AC2:unverifiable", "AC3:x"]
    with Store(tmp_path / "s.db") as store:
        store.create_experiment(e)
        for n, case in enumerate(ids):
            store.record_run(run(case, 1, items, items[: n % 3]))
            if n % 7:
                store.record_run(run(case, 2, items, [*items[1:], "extra"]))
        lazy = render_html(e, store.summaries(e.id, decode_items=False))
        decoded = render_html(e, store.summaries(e.id))
    assert lazy == decoded and 'id="passhat-pages"' in lazy


def test_the_templates_compiled_code_is_kept_between_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report compiles its templates once per user, not once per process: a later
    process's environment loads their code from jinja2's folder (here made under
    `tmp_path`), and an edited template is compiled again."""
    import tempfile

    import jinja2

    from passhat.report.html import render

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # jinja2's folder is made here
    render._environment.cache_clear()
    try:
        render._environment().get_template("report.html.j2")
        assert list(tmp_path.glob("_jinja2-cache-*/__jinja2_*.cache"))
        render._environment.cache_clear()  # as in a new process

        def compiled(*_: object, **__: object) -> None:
            raise AssertionError("compiled again")

        with monkeypatch.context() as patched:
            patched.setattr(jinja2.Environment, "compile", compiled)
            render._environment().get_template("report.html.j2")
            source, filename, _ = render._environment().loader.get_source(  # type: ignore[union-attr]
                render._environment(), "report.html.j2"
            )
            bucket = render._compiled().get_bucket(  # type: ignore[union-attr]
                render._environment(), "report.html.j2", filename, source + "{# edited #}"
            )
            assert bucket.code is None  # another text: no code kept for it
    finally:
        render._environment.cache_clear()


def test_a_folder_for_compiled_templates_that_cannot_be_written_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temporary directory that is full or read-only: the templates are compiled,
    as before, and the page is written."""
    import tempfile

    import jinja2

    from passhat.report.html import render

    def refused(*_: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(jinja2.FileSystemBytecodeCache, "dump_bytecode", refused)
    monkeypatch.setattr(jinja2.FileSystemBytecodeCache, "load_bytecode", refused)
    render._environment.cache_clear()
    try:
        assert render._environment().get_template("report.html.j2").render is not None
        assert not list(tmp_path.glob("_jinja2-cache-*/__jinja2_*.cache"))
    finally:
        render._environment.cache_clear()


def test_a_blob_is_deflated_as_zlib_does_or_refused_once_too_long() -> None:
    """`_deflated`, fed a step at a time, writes zlib's own bytes, and refuses (None) a
    blob one byte longer than allowed: the page past the last that fits is not
    compressed whole (`_embedded_runs`)."""
    rng = random.Random(38)
    words = [f"word{n}".encode() for n in range(500)]
    raw = b" ".join(rng.choice(words) for _ in range(40_000))  # several steps
    whole = zlib.compress(raw, 9)
    assert len(raw) > 3 * html_runs._DEFLATE_STEP
    assert html_runs._deflated([raw], None) == whole
    assert html_runs._deflated([raw], len(whole)) == whole
    assert html_runs._deflated([raw], len(whole) - 1) is None
    assert html_runs._deflated([raw], 100) is None
    assert html_runs._deflated([b""], 8) == zlib.compress(b"", 9)
    cut = [raw[:1000], b"", raw[1000:70_000], raw[70_000:]]  # parts fed in turn: the same
    assert html_runs._deflated(cut, None) == whole


def test_the_runs_blobs_stop_at_the_page_that_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages past the first are embedded while the blobs' total stays within the budget:
    a budget exactly the first two blobs' length takes two, one character less one."""
    e = experiment([f"c{n:03d}" for n in range(30)], k=3)
    runs = [run(case, i, ["AC1:x"], ["AC1:x"][: i % 2]) for case in e.case_ids for i in (1, 2, 3)]
    accounting = html_render.experiment_accounting(e, runs)
    monkeypatch.setattr(html_pages, "PAGED_ABOVE", 5)
    monkeypatch.setattr(html_pages, "PAGE_CASES", 5)
    pages = html_pages._pages(html_facts._case_facts(runs, accounting))
    blobs = [html_runs._runs_blob(page, None) or "" for page in pages]
    assert len(pages) > 3 and all(blobs)
    for budget, taken in [
        (len(blobs[0]) + len(blobs[1]), 2),
        (len(blobs[0]) + len(blobs[1]) - 1, 1),
    ]:
        monkeypatch.setattr(html_runs, "RUNS_BUDGET", budget)
        assert [blob for _, blob in html_runs._embedded_runs(pages, None)] == blobs[:taken]


def test_the_pages_blob_is_gzipped_fast_unless_it_is_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Up to `GZIP_FAST_UP_TO` bytes the other pages' columns are gzipped at level 3 (a
    quarter of level 6's CPU); past it, where the blob is most of a page that must stay
    within 5 MB, at level 6 (smaller). Either way it is gzip of the same bytes."""
    rng = random.Random(38)
    data = ",".join(str(rng.randint(0, 1200)) for _ in range(100_000)).encode()

    def gzip_at(level: int) -> bytes:
        packer = zlib.compressobj(level, zlib.DEFLATED, 31, 9, zlib.Z_FILTERED)
        return packer.compress(data) + packer.flush()

    monkeypatch.setattr(html_pages, "GZIP_FAST_UP_TO", len(data))
    fast = html_pages._gzip(data)
    monkeypatch.setattr(html_pages, "GZIP_FAST_UP_TO", len(data) - 1)
    small = html_pages._gzip(data)
    assert (fast, small) == (gzip_at(3), gzip_at(6)) and len(small) < len(fast)
    assert gzip.decompress(fast) == gzip.decompress(small) == data
