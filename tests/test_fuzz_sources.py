"""Property-based fuzz of foreign results, beside the suite loader's (test_fuzz.py):
τ²-bench results, Harbor trials and audited folders, each a valid document with a
few places replaced by anything (wrong types, huge integers, NaN, deep nesting).

Whatever the input, reading either succeeds or fails with a `PasshatError` (one line,
exit 2): never another exception, a traceback or a hang.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from passhat.errors import PasshatError
from passhat.sources.audit import AuditOptions, audit_folder, audit_summary
from passhat.sources.harbor import import_job
from passhat.sources.tau2 import import_results
from test_fuzz import FUZZ, _paths, _replace, values
from test_import_harbor import TRIALS, write_job
from test_import_tau2 import RESULTS

deep = st.integers(1, 3).map(lambda n: json.loads("[" * (n * 1000) + "]" * (n * 1000)))
anything = st.one_of(
    values,
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from([float("nan"), float("inf"), 10**300, "1e999", "NaN", "", {}, []]),
)


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> str:
    """A valid document with a few places replaced by anything, or text nested too deep."""
    if draw(st.integers(0, 19)) == 0:
        return "[" * 200_000 + "]" * 200_000
    data = base
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)))
        data = _replace(data, path, draw(anything))
    return json.dumps(data, default=str)


@FUZZ
@given(text=mutated(RESULTS))
def test_tau2_import_reads_or_names_the_field(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            imported = import_results(path)
        except PasshatError as error:
            assert str(error).strip() and "\n" not in str(error).strip()
            return
        assert all(1 <= r.run_index <= imported.experiment.k_requested for r in imported.runs)


@FUZZ
@given(
    texts=st.lists(mutated(TRIALS[0]), min_size=1, max_size=3), config=mutated({"n_attempts": 3})
)
def test_harbor_import_reads_or_names_the_field(texts: list[str], config: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        job = write_job(Path(folder) / "job", [])
        (job / "config.json").write_text(config, encoding="utf-8", errors="surrogatepass")
        for i, text in enumerate(texts):
            (job / f"t{i}").mkdir()
            (job / f"t{i}" / "result.json").write_text(
                text, encoding="utf-8", errors="surrogatepass"
            )
        try:
            import_job(job)
        except PasshatError as error:
            assert str(error).strip() and "\n" not in str(error).strip()


@FUZZ
@given(
    manifest=mutated({"runs_per_configuration": 2, "configurations": ["a", "b"]}),
    grade=mutated({"passed": True, "reward": 1.0}),
    report=st.one_of(st.text(max_size=300), st.sampled_from(["ran 9" + "9" * 4999 + " times"])),
    names=st.lists(
        st.sampled_from(["run-1", "run-2", "run-0", "run-99999999", "trial-3"]), max_size=3
    ),
)
def test_audit_reads_or_names_the_problem(
    manifest: str, grade: str, report: str, names: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "benchmark.json").write_text(manifest, encoding="utf-8", errors="surrogatepass")
        (root / "README.md").write_text(report, encoding="utf-8", errors="surrogatepass")
        for name in ["run-1", *names]:
            run = root / "out" / "a" / name
            run.mkdir(parents=True, exist_ok=True)
            (run / "grade.json").write_text(grade, encoding="utf-8", errors="surrogatepass")
        try:
            audit = audit_folder(root, AuditOptions())
        except PasshatError as error:
            assert str(error).strip() and "\n" not in str(error).strip()
            return
        json.dumps(audit_summary(audit))


def test_half_a_surrogate_pair_is_one_line(tmp_path: Path) -> None:
    """Found by the fuzz above: JSON may escape half of a surrogate pair ("\\ud83d"),
    which Python reads as text no UTF-8 encoder takes; the import hashed it and
    crashed with UnicodeEncodeError. A whole pair ("\\ud83d\\ude00") is an emoji."""
    data = json.loads(json.dumps(RESULTS))
    data["info"]["user_info"]["llm"] = {"\ud83d": None}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        import_results(path)
    except PasshatError as error:
        assert "lone surrogate" in str(error) and str(path) in str(error)
    else:
        raise AssertionError("a lone surrogate was imported")
    data["info"]["user_info"]["llm"] = {"\ud83d\ude00": None}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert import_results(path).runs


fragments = st.sampled_from(
    [
        "ran", "5", "five", "五", "times", "runs", "per", "each", "configuration", "seeds",
        "0, 1 and 2", "1-5", "k", "=", ":", "--n-attempts", "-k", "pass^", "@", "{1, 3}",
        "∈", "|", "---", ":--", "&", "\\\\", "\\begin{tabular}", "\\end{tabular}", "\n",
        "up to", "train", "(n=", ")", "次", "跑", "99999999999", "in triplicate", "$", " ",
    ]
)  # fmt: skip


@FUZZ
@given(
    parts=st.lists(st.one_of(fragments, st.text(max_size=20)), max_size=60),
    name=st.sampled_from(["README.md", "paper/main.tex", "config.yaml", "s.json", "run.sh"]),
)
def test_the_claim_reader_reads_anything_into_claims_with_their_line(
    parts: list[str], name: str
) -> None:
    """Whatever a write-up holds, each claim is a count >= 1 on a line of the text, and
    each number set aside names its rule (issue 34)."""
    from passhat.sources.claims import read_text

    text = " ".join(parts)
    reading = read_text(text, name)
    lines = max(1, len(text.splitlines()))
    for claim in reading.claims:
        assert claim.k >= 1 and claim.rule
        assert claim.source.startswith(name + ":")
        assert 1 <= int(claim.source.rsplit(":", 1)[1]) <= lines
    assert all(aside.rule for aside in reading.set_aside)


def _outcome(path: Path) -> tuple[str, Any]:
    """What an import of `path` gives: its error, or its runs, notes and figures."""
    from dataclasses import replace

    try:
        imported = import_results(path)
    except PasshatError as error:
        return "error", str(error)
    runs = sorted(
        (replace(r, experiment_id="") for r in imported.records()),
        key=lambda r: (r.case_id, r.run_index),
    )
    return "read", (repr(runs), imported.notes, imported.figures)


@FUZZ
@given(text=mutated(RESULTS))
def test_tau2_results_read_as_a_stream_read_as_they_do_whole(text: str) -> None:
    """Issue 34: whatever the file holds, reading it as a stream gives the error or the runs
    reading it whole gives (the stream leaves what it cannot read alike to the whole read)."""
    from unittest import mock

    from passhat.sources import tau2

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        whole = _outcome(path)
        with mock.patch.object(tau2, "STREAM_ABOVE", 0):
            streamed = _outcome(path)
    assert streamed == whole


def test_a_surrogate_escape_or_simulations_that_are_no_list_are_read_whole(
    tmp_path: Path,
) -> None:
    """The stream reads a lone surrogate escape as '?' and an object's "item" member as a
    simulation; a file holding either is read whole, so it says what a whole read says."""
    from passhat.sources._files import streamable

    data = json.loads(json.dumps(RESULTS))
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    assert streamable(path, "simulations")
    path.write_text(json.dumps({**data, "simulations": {"item": data["simulations"][0]}}))
    assert not streamable(path, "simulations")
    data["info"]["user_info"]["llm"] = "\ud83d"
    path.write_text(json.dumps(data))
    assert not streamable(path, "simulations")
