"""passhat/searching.py: a `matches` search decides as Python's `re` does, for at most
its time bound, whichever engine runs it (review50: `(?i)kapali` over "Sipariş kapalı"
changed its verdict when the search moved from `re` to `regex`)."""

from __future__ import annotations

import re
import time
import warnings
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat import searching
from passhat.scoring import Matches, ScorerError

# letters whose case the engines fold alike or not, \w and \s edge cases, plain ASCII
TRICKY = "iIıİ" + "sſKKσςµμ" + "\u0301²½\x1c\n" + "ßẞ\U00016ea0\U00016ebb\U0001df95"
PLAIN = "abcikIKsSxyzé-_ 0.:ß"
_PIECES = [
    r"\w",
    r"\W",
    r"\s",
    r"\S",
    r"\d",
    r"\b",
    r"\B",
    ".",
    "^",
    "$",
    "[a-z]",
    "[^a-z]",
    "[A-Z]",
    "[h-j]",
    "[H-J]",
    r"[\w-]",
    r"[^\W\d]",
]


def _pattern(alphabet: str) -> st.SearchStrategy[str]:
    atom = st.one_of(
        st.sampled_from(alphabet).map(re.escape),
        st.sampled_from(_PIECES),
        st.lists(st.sampled_from(alphabet), min_size=1, max_size=3).map(
            lambda cs: "[" + "".join(re.escape(c) for c in cs) + "]"
        ),
        st.lists(st.sampled_from(alphabet), min_size=1, max_size=2).map(
            lambda cs: "[^" + "".join(re.escape(c) for c in cs) + "]"
        ),
    )
    piece = st.tuples(atom, st.sampled_from(["", "", "*", "+", "?", "{1,2}"])).map("".join)
    body = st.lists(piece, min_size=1, max_size=2).map("".join)
    grouped = st.one_of(
        body,
        body.map(lambda b: f"(?i:{b})"),
        body.map(lambda b: f"(?-i:{b})"),
        st.tuples(body, body).map(lambda bs: f"(?:{bs[0]}|{bs[1]})"),
        body.map(lambda b: f"({b})\\1"),
    )
    flags = st.sampled_from(["(?i)", "(?i)", "", "(?a)", "(?ai)", "(?s)"])
    return st.tuples(flags, st.lists(grouped, min_size=1, max_size=2).map("".join)).map("".join)


def _valid(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@settings(max_examples=150)
@given(st.data())
def test_where_regex_searches_it_decides_as_re(data: st.DataObject) -> None:
    """The regex engine runs every search not `disputed`: over generated patterns and
    texts of plain letters, its verdict is re's."""
    pattern = data.draw(_pattern(PLAIN).filter(_valid), "pattern")
    text = data.draw(st.text(PLAIN, max_size=12), "text")
    if searching.disputed(pattern, text):
        return
    found = searching._compiled(pattern).search(text) is not None
    assert found == (re.search(pattern, text) is not None), (pattern, text)


@settings(max_examples=100)
@given(st.data())
def test_a_search_decides_as_re_with_any_letters(data: st.DataObject) -> None:
    """With Turkish i's, combining marks, U+001C, letters newer than this Python's
    Unicode: search() decides as re, whichever engine it takes. (re is run here in this
    process, not in a child, to try many: the child is tried below.)"""
    pattern = data.draw(_pattern(TRICKY + "a ").filter(_valid), "pattern")
    text = data.draw(st.text(TRICKY + "a ", max_size=4), "text")
    wanted = re.search(pattern, text) is not None
    if searching.disputed(pattern, text):
        return
    assert searching.search(pattern, text, 30.0) == wanted, (pattern, text)


TEMPLATES = ["{c}", "[{c}]", "[^{c}]", "[{c}a]", "{c}+$", "(.){c}"]
CLASSES = [r"\w", r"\W", r"\s", r"\S", r"\b", r"\B", "[a-z]", "[A-Z]", "[^a-z]", "[h-j]", "."]


def test_a_search_decides_as_re_over_every_small_case() -> None:
    """Every letter of TRICKY in each template, and each class, with and without (?i)
    and (?a), over every text of one or two of those letters: where regex would search,
    its verdict is re's."""
    letters = TRICKY + "a "
    patterns = [t.format(c=re.escape(c)) for t in TEMPLATES for c in letters] + CLASSES
    texts = [*letters, *(a + b for a in letters for b in "iıIİ\u0301a ")]
    searched = 0
    for flags in ("", "(?i)", "(?a)", "(?ai)"):
        for pattern in (flags + p for p in patterns):
            for text in texts:
                if not searching.disputed(pattern, text):
                    searched += 1
                    assert searching.search(pattern, text, 30.0) == bool(
                        re.search(pattern, text)
                    ), (pattern, text)
    assert searched > 10_000  # most of them taken by regex


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("(?i)kapali", "Sipariş kapalı"),
        ("(?i)KAPALI", "kapalı"),
        ("(?i)İstanbul", "istanbul"),
        ("(?i)kapalı", "KAPALI"),
        (r"^\w+$", "cafe\u0301"),
        (r"\s", "a\x1cb"),
        (r"[[:alpha:]]", "x"),
        (r"colou?r{e<=1}", "colour"),
        (r"\u0131", "ı"),
        (r"\B", ""),
        (r"(?i)x*\B", ""),
    ],
)
def test_each_known_difference_is_decided_by_re(pattern: str, text: str) -> None:
    """Each way the engines were seen to differ: taken to re, and re's verdict."""
    assert searching.disputed(pattern, text)
    with warnings.catch_warnings():  # re: "Possible nested set" for [[:alpha:]]
        warnings.simplefilter("ignore", FutureWarning)
        wanted = re.search(pattern, text) is not None
    assert searching.search(pattern, text, 30.0) == wanted


def test_every_letter_pair_the_engines_fold_apart_is_disputed() -> None:
    """Over all of Unicode: two letters one engine takes for one ignoring case and the
    other does not; at least one of them sends a search to re."""
    import _sre

    import regex
    import regex._regex as engine  # type: ignore[import-untyped]

    partners: dict[int, set[int]] = defaultdict(set)
    flags = regex.IGNORECASE | regex.UNICODE
    for point in range(0x110000):
        if 0xD800 <= point < 0xE000:
            continue
        char = chr(point)
        folds = (char.lower(), char.upper(), char.casefold())
        cases = engine.get_all_cases(flags, point)
        lower = _sre.unicode_tolower(point)
        if lower == point and folds == (char, char, char) and cases == [point]:
            # no engine gives it another case: its only pair is with itself, never checked
            # (skipping the 1.1 million of these was four fifths of the test's CPU)
            continue
        keys = {point, lower}
        keys.update(ord(c) for c in folds if len(c) == 1)
        keys.update(cases)
        for key in keys:
            partners[key] |= keys
    differing = set()
    for group in partners.values():
        for a in group:
            for b in group:
                one = f"(?i){re.escape(chr(a))}"
                if a != b and (re.fullmatch(one, chr(b)) is None) != (
                    regex.fullmatch(one, chr(b)) is None
                ):
                    differing.add((a, b))
    assert (ord("i"), ord("ı")) in differing  # the check sees the known one
    undisputed = [(a, b) for a, b in differing if not searching.disputed(chr(a), chr(b))]
    assert not undisputed, [(hex(a), hex(b)) for a, b in undisputed]


def test_re_out_of_time_is_stopped_at_the_bound() -> None:
    """re, run for a disputed search, backtracks as ever: its child is ended at the bound."""
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        searching.search(r"(?i)(ı+)+$", "ı" * 40 + "!", 0.5)
    assert time.monotonic() - started < 5


def test_a_search_by_re_out_of_time_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat import scoring

    monkeypatch.setattr(scoring, "MATCH_TIMEOUT_S", 0.3)
    state = {"note": "kapalı " + "a" * 40 + "!"}
    detail = Matches("note", "(a+)+$")(state, {})
    assert detail["passed"] is False
    assert "ran past 0.3 s" in detail["problem"]


def test_a_childs_slow_start_is_not_counted_against_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bound is the search's: a child slow to start (a loaded machine) still decides
    a quick search within it, and one that never starts in START_S is passhat's trouble
    (the run errored), not a search past its time (the run failed)."""
    slow = "import time\ntime.sleep(1.5)\n" + searching._CHILD
    monkeypatch.setattr(searching, "_CHILD", slow)
    assert searching.search("(?i)kapali", "Sipariş kapalı", 0.5) is True
    monkeypatch.setattr(searching, "START_S", 0.3)
    started = time.monotonic()
    with pytest.raises(ScorerError, match=r"did not start in 0\.3 s"):
        Matches("note", "(?i)kapali")({"note": "kapalı"}, {})
    assert time.monotonic() - started < 1.4  # not waited out: the child was ended


def test_a_child_that_cannot_search_is_no_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """passhat's own trouble (the child failed): the scorer raises, the run is errored."""
    monkeypatch.setattr(searching.sys, "executable", "/bin/false")
    with pytest.raises(ScorerError, match="could not search note"):
        Matches("note", "(?i)kapali")({"note": "kapalı"}, {})


def test_an_experiment_grades_turkish_text_as_re_did(tmp_path: Path) -> None:
    """The whole way: a run's reply "Sipariş kapalı" under `(?i)kapali`, graded by the
    runner (in a thread, passhat's process sealed), is passed, as re decided it; with a
    pattern re finds nowhere, failed."""
    import yaml

    import passhat
    from test_scorers_more import write_suite

    for pattern, status in (("(?i)kapali", "passed"), ("(?i)açık", "failed")):
        root = write_suite(tmp_path / status, [{"matches": "answer.text", "pattern": pattern}])
        case_file = root / "cases" / "refund-1.yaml"
        case = yaml.safe_load(case_file.read_text(encoding="utf-8"))
        case["input"]["reply"] = case["goal"]["answer"]["text"] = "Sipariş kapalı"
        case_file.write_text(yaml.safe_dump(case, allow_unicode=True), encoding="utf-8")
        done = passhat.evaluate(root, k=1, db=tmp_path / f"{status}.db", concurrency=1)
        assert [(r.status, r.error_message) for r in done.runs()] == [(status, None)]


def test_a_pattern_regex_would_write_out_is_searched_by_re() -> None:
    """A counted repeat regex.compile writes out copy by copy (no time bound, in passhat's
    own process): `(?:ab|c){300000}` killed the process with SIGSEGV. Such a pattern is
    searched by re, in its child; common counted patterns stay regex's."""
    import subprocess
    import sys

    code = (
        "from passhat import searching\n"
        "print(searching.search('(?:ab|c){300000}', 'ab' * 10, 30.0),"
        " searching.search('^(?:ab|c){300000}', 'c' * 300000, 30.0))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "False True\n"), done.stderr[-500:]
    for written_out in ("a{10000000}", "(?:ab|c){300000,}", "(?:ab|c){300000,300001}"):
        assert searching.unsafe(written_out), written_out
    common = (r"^\d{4}-\d{2}-\d{2}$", r"[A-Z]{3}\d{6}", r"^.{0,2000}$", r"^[\s\S]{1,100000}$")
    for pattern in (*common, "a{}b{,}"):  # a range past its least count is regex's loop
        assert not searching.unsafe(pattern), pattern


def test_a_pattern_regex_cannot_compile_is_searched_by_re() -> None:
    """400 nested groups: re reads them (the suite's check passes), regex raises
    RecursionError; the search is re's, not passhat's trouble."""
    pattern = "(" * 400 + "a" + ")" * 400
    re.compile(pattern)
    assert searching.search(pattern, "xa", 30.0) is True
    assert searching.search(pattern, "x", 30.0) is False


def test_a_search_by_re_with_descriptors_past_1024() -> None:
    """passhat raises its own limit of open files (isolation._more_files) and its runs'
    connections take them: a child's pipe numbered past 1,024, which select.select
    refuses (ValueError), is still read."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"a hard limit of {hard} open files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        assert max(held) > 1024
        assert searching.search("(?i)kapali", "Sipariş kapalı", 30.0) is True
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_importing_searching_builds_no_table_of_the_whole_bmp() -> None:
    """e2e55: the class of every BMP character (`_in_bmp`, what a look for rare
    characters cuts out) is compiled at its first use, not at import: re builds its
    table one character at a time, 1.5 ms of every `passhat run` (scoring imports this
    module whether a suite has a `matches` scorer or not)."""
    import subprocess
    import sys

    probe = (
        "import re\n"
        "seen = []\n"
        "compile = re.compile\n"
        "re.compile = lambda p, flags=0: (seen.append(p), compile(p, flags))[1]\n"
        "import passhat.searching\n"
        "print([p for p in seen if isinstance(p, str) and '\\uffff' in p])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
