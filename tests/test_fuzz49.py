"""Files fed where passhat reads one, as an outside reviewer would: a FIFO nobody writes
to, a sparse 2 GB file, /dev/zero, text that is not UTF-8, JSON nested 100,000 deep, a
key written twice, an alias bomb. Each ends in one line naming the file and the fix,
exit 2, no traceback, no hang; memory stays bounded (the CLI runs under a 1 GB cap).

The doors that hung or ran out of memory are run as a real `passhat` process with a
timeout and an address-space cap: in-process, a hang would stop the test run itself.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli

pytest_plugins = ["pytester"]

MEMORY_CAP = 1 << 30
"""The address space a `passhat` process under test may take (1 GB)."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def passhat(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`passhat ARGS` as a process, capped at 1 GB and 20 s: its exit code and stderr. A
    hang fails the test (TimeoutExpired) instead of stopping the test run."""
    done = subprocess.run(
        [sys.executable, "-m", "passhat", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=20,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        preexec_fn=_capped,
        check=False,
    )
    return done.returncode, done.stderr


def one_line(code: int, err: str, *words: str) -> None:
    """Exit 2 with one line on stderr that holds every word (and no traceback)."""
    assert code == 2 and "Traceback" not in err, err[-2000:]
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A copy of the bundled clarify suite."""
    return Path(shutil.copytree(CLARIFY, tmp_path / "clarify"))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding three replayed runs of the seed's card (for `report --prices`)."""
    import contextlib
    import io

    from passhat.cli import main

    db = tmp_path_factory.mktemp("store") / "p.db"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            main(["run", str(CLARIFY), "--case", SEED, "-k", "3", "--db", str(db)])
        except SystemExit as exit_:
            assert not exit_.code, out.getvalue()
    return db


def sparse(path: Path, size: int = 2 << 30) -> Path:
    """A sparse file of `size` bytes (2 GB: all holes, no disk taken)."""
    with path.open("wb") as f:
        f.truncate(size)
    return path


def test_a_store_that_is_a_fifo_is_one_line_not_a_hang(tmp_path: Path) -> None:
    """PASSHAT_DB naming a FIFO hung every command in SQLite's open (seen: `list` never
    returned, on main)."""
    fifo = tmp_path / "store.db"
    os.mkfifo(fifo)
    code, err = passhat("list", cwd=tmp_path, env={"PASSHAT_DB": str(fifo)})
    one_line(code, err, str(fifo), "FIFO", "--db")


def test_a_store_that_is_a_device_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "list", "--db", "/dev/null")
    one_line(r.code, r.err, "/dev/null", "not a file")


@pytest.mark.parametrize("door", ["prices", "cassette", "case"])
def test_a_fifo_where_a_file_goes_is_one_line_not_a_hang(
    door: str, suite: Path, store: Path, tmp_path: Path
) -> None:
    """A FIFO nobody writes to as a price file or a replay cassette blocked for ever
    (seen on main); as a case file it was skipped without a word: a case lost."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    if door == "case":
        os.mkfifo(suite / "cases" / "zz-fifo.yaml")
        one_line(*passhat("check", suite, cwd=tmp_path), "zz-fifo.yaml", "not a file")
        return
    if door == "prices":
        code, err = passhat("report", "latest", "--db", store, "--prices", fifo, cwd=tmp_path)
    else:
        code, err = passhat(
            "run", suite, "--case", SEED, "-k", "1", "--db", tmp_path / "p.db",
            "--model", f"replay:{fifo}", cwd=tmp_path,
        )  # fmt: skip
    one_line(code, err, str(fifo))


@pytest.mark.parametrize("door", ["prices", "case", "suite.yaml"])
def test_a_sparse_2gb_file_where_a_file_goes_is_one_line_in_bounded_memory(
    door: str, suite: Path, store: Path, tmp_path: Path
) -> None:
    """A 2 GB file of holes was read whole: MemoryError tracebacks under a 1 GB cap (seen
    on main for each door); now it is sized before it is read. (A cassette did the same;
    it is now checked line by line first, which reads the 2 GB: too slow for here.)"""
    big = sparse(tmp_path / "big")
    if door in ("case", "suite.yaml"):
        target = suite / ("cases/zz-big.yaml" if door == "case" else "suite.yaml")
        target.unlink(missing_ok=True)
        target.symlink_to(big)
        one_line(*passhat("check", suite, cwd=tmp_path), target.name, "2,147,483,648 bytes")
        return
    code, err = passhat("report", "latest", "--db", store, "--prices", big, cwd=tmp_path)
    one_line(code, err, str(big), "2.0 GB")


PRICES = {
    "not-utf8.yaml": (b"\xff\xfe{}", "not UTF-8"),
    "deep.json": (b"[" * 100_000, "nesting depth"),
    "twice.json": (
        b'{"m": {"in": 1, "out": 1}, "m": {"in": 2, "out": 2}}',
        "written twice",
    ),
    "nul.yaml": (b"a\x00b\n", "#x0000"),
    "device": (None, "device"),
}


@pytest.mark.parametrize("name", sorted(PRICES))
def test_a_bad_prices_file_is_one_line(
    name: str, capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    """Seen on main: text that is not UTF-8 and JSON 100,000 deep were tracebacks
    (UnicodeDecodeError, RecursionError), a model written twice silently took its last
    prices, and libyaml's message on a NUL byte took two lines."""
    text, word = PRICES[name]
    path = Path("/dev/zero") if text is None else tmp_path / name
    if text is not None:
        path.write_bytes(text)
    r = run_cli(capsys, "report", "latest", "--db", str(store), "--prices", str(path))
    one_line(r.code, r.err, f"--prices {path}", word)


def test_an_alias_bomb_in_a_prices_file_is_not_expanded(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    """Aliases nested nine deep name 9^9 items: read as shared values (as before), the
    price file is refused in one line for its shape, never expanded."""
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    r = run_cli(capsys, "report", "latest", "--db", str(store), "--prices", str(path))
    one_line(r.code, r.err, f"--prices {path}", "give in and out")


def test_a_cassette_that_is_not_utf8_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A replay cassette of bytes that are not UTF-8 was read whole before it was checked:
    a UnicodeDecodeError traceback (seen on main)."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"cassette": 1}\n\xff\xfe\n')
    r = run_cli(
        capsys, "run", str(CLARIFY), "--case", SEED, "-k", "1",
        "--db", str(tmp_path / "p.db"), "--model", f"replay:{path}",
    )  # fmt: skip
    one_line(r.code, r.err, f"{path}:2", "not JSON")


def test_a_dangling_link_in_cases_is_still_skipped(
    capsys: pytest.CaptureFixture[str], suite: Path
) -> None:
    """An editor's lock file (emacs's .#name.yaml, a link to nothing) is no case: the
    suite still loads while a case is being edited."""
    (suite / "cases" / ".#ac-conflict-001.yaml").symlink_to("user@host.1234:1700000000")
    r = run_cli(capsys, "check", str(suite))
    assert r.code == 0, r.err


def damaged(store: Path, tmp_path: Path, assignment: str) -> str:
    """A copy of `store` with `assignment` written by hand into its first run (as with
    the sqlite3 shell: the summary triggers copy it): the copy's path."""
    import sqlite3

    copy = tmp_path / "damaged.db"
    shutil.copy(store, copy)
    with sqlite3.connect(copy) as db:
        db.execute(f"UPDATE runs SET {assignment} WHERE run_index = 1")
    db.close()
    return str(copy)


@pytest.mark.parametrize(
    "assignment", ["input_tokens = 'many'", "duration_s = 'slow'", "output_tokens = x'ff'"]
)
def test_show_diff_and_why_name_a_number_column_holding_text(
    assignment: str, capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    """Text written by hand where a run's tokens or duration go was a TypeError or
    ValueError traceback in `show`, `diff` and `why` (seen on main); now the run and the
    column are named."""
    db = damaged(store, tmp_path, assignment)
    column = assignment.split()[0]
    both = ["diff", f"latest:{SEED}:1", f"latest:{SEED}:2"]
    for args in (["show", "latest", SEED, "1"], both, ["why", "latest"]):
        r = run_cli(capsys, *args, "--db", db)
        one_line(r.code, r.err, "damaged", column, f"run 1 of case {SEED!r}")


def test_compare_and_views_summary_name_a_token_column_holding_text(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    """`passhat view` on such a store ended before serving, in "TypeError: unsupported
    operand type(s) for +=: 'int' and 'str'" (usage_of over Store.tokens), and `compare`
    alike (seen on main); Store.tokens now names the run first."""
    from passhat.errors import StoreError
    from passhat.store import Store
    from passhat.view.data import summary_of

    db = damaged(store, tmp_path, "input_tokens = 'many'")
    r = run_cli(capsys, "compare", "latest", "latest", "--db", db)
    one_line(r.code, r.err, "damaged", "input_tokens", f"run 1 of case {SEED!r}")
    opened = Store(db, read_only=True, create=False)
    with opened, pytest.raises(StoreError, match="damaged: input_tokens of run 1"):
        summary_of(opened, opened.experiment("latest"))


@pytest.mark.parametrize("shape", [[], ["--json"], ["--html", "page.html"]])
def test_report_names_a_token_column_holding_text(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path, shape: list[str]
) -> None:
    """report sums run_summaries' tokens without checking them: text in input_tokens was a
    TypeError traceback. The store's check (columns.TEXT_TOKENS, 16 ms at 100,000 runs) is
    paid only when the sum fails, and names the run."""
    db = damaged(store, tmp_path, "input_tokens = 'many'")
    shape = [str(tmp_path / a) if a.endswith(".html") else a for a in shape]
    r = run_cli(capsys, "report", "latest", "--db", db, *shape)
    one_line(r.code, r.err, "damaged", "input_tokens")


@pytest.fixture
def verdicts(tmp_path: Path) -> Path:
    """A verdict file of five cases, three runs each, passes and fails mixed."""
    path = tmp_path / "verdicts.jsonl"
    path.write_text(
        "".join(
            f'{{"case": "{case}", "run": {run}, "status": '
            f'"{"passed" if (run + ord(case)) % 2 else "failed"}"}}\n'
            for case in "abcde"
            for run in (1, 2, 3)
        )
    )
    return path


@pytest.mark.parametrize(
    ("option", "value", "word"),
    [("--resamples", "100000000", "at most 1,000,000"), ("--seed", "-5", "0 or more")],
)
def test_metrics_resampling_options_past_their_range_are_one_line(
    option: str, value: str, word: str, capsys: pytest.CaptureFixture[str], verdicts: Path
) -> None:
    """Seen on main: -B 100000000 was a MemoryError traceback under a 1.5 GB cap (its
    totals take 16 bytes a resample; uncapped, 1.6 GB), --seed -5 numpy's ValueError
    traceback."""
    r = run_cli(capsys, "metrics", str(verdicts), option, value)
    one_line(r.code, r.err, f"{option} is ", word)


def test_a_run_seed_past_sqlites_integers_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`run --seed 10**26` loaded the suite, then failed to store the experiment: an
    OverflowError traceback (seen on main). The largest 8-byte seed still runs."""
    db = str(tmp_path / "p.db")
    base = ["run", str(CLARIFY), "--case", SEED, "-k", "1", "--db", db]
    r = run_cli(capsys, *base, "--seed", str(10**26))
    one_line(r.code, r.err, f"--seed is {10**26}")
    assert run_cli(capsys, *base, "--seed", str(2**63 - 1)).code == 0


def test_an_inspect_log_whose_part_unpacks_past_the_limit_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A zip bomb: an .eval log whose sample packs 1.5 GB of text into 1.5 MB kept
    Inspect's reader busy past 120 s (timed out, seen on main), one whose header.json
    did so ran out of memory. The part sizes the zip declares are read first; here
    with the limit lowered to 1 MB, so that the test writes 2 MB, not 1.5 GB."""
    pytest.importorskip("inspect_ai")
    import zipfile

    from passhat.sources import inspect_log

    monkeypatch.setattr(inspect_log, "MAX_JSON_BYTES", 1 << 20)
    log = tmp_path / "bomb.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        archive.writestr("samples/s1_epoch_1.json", '{"pad": "' + "a" * (2 << 20) + '"}')
    assert log.stat().st_size < 20_000
    r = run_cli(capsys, "import", "inspect", str(log), "--db", str(tmp_path / "p.db"))
    one_line(r.code, r.err, str(log), "samples/s1_epoch_1.json", "2,097,163 bytes")


@pytest.mark.parametrize("value", ["inf", "1e30"])
def test_a_busy_timeout_past_a_day_is_one_line(
    value: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    store: Path,
) -> None:
    """$PASSHAT_BUSY_TIMEOUT=inf was an OverflowError traceback in every command; 1e30
    let `run` record its runs and then ended in one at the lease's release (seen on
    main)."""
    monkeypatch.setenv("PASSHAT_BUSY_TIMEOUT", value)
    r = run_cli(capsys, "list", "--db", str(store))
    one_line(r.code, r.err, "$PASSHAT_BUSY_TIMEOUT", repr(value), "at most 86,400")


@pytest.mark.parametrize("k", ["0", "-3", str(10**21)])
def test_the_pytest_plugins_k_out_of_range_is_one_usage_line(
    k: str, pytester: pytest.Pytester
) -> None:
    """`pytest --passhat-k 0` errored every passhat test with an InputError traceback
    saying "-k is 0" (no such pytest option; seen on main): now pytest stops at once
    with a usage error naming --passhat-k, before any test runs."""
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("--passhat-k", k, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --passhat-k is {int(k):,}; give from 1 to 100,000*"])


def test_an_audit_manifest_writing_its_run_count_twice_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`"runs_per_configuration": 1, "runs_per_configuration": 5`: JSON's last one won,
    so the audit declared 5 runs where a reader of the file sees 1 (seen on main: exit
    0, declared 5). Now the manifest is refused, naming the key."""
    from cli_helpers import ROOT

    folder = Path(shutil.copytree(ROOT / "examples" / "audit" / "trello", tmp_path / "t"))
    manifest = folder / "benchmark.json"
    text = manifest.read_text()
    twice = '"runs_per_configuration": 1, "runs_per_configuration": 5'
    manifest.write_text(text.replace('"runs_per_configuration": 1', twice))
    r = run_cli(capsys, "audit", str(folder))
    one_line(r.code, r.err, str(manifest), "'runs_per_configuration' twice")


@pytest.mark.parametrize("command", ["report", "export"])
def test_a_store_cut_short_is_one_line_naming_it(
    command: str, capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    """A store file that lost its last kilobyte (a copy cut short) opens, and then the
    read of its runs met "database disk image is malformed": an sqlite3.DatabaseError
    traceback from report and export (seen on main)."""
    cut = tmp_path / "cut.db"
    data = store.read_bytes()
    cut.write_bytes(data[: len(data) - 1000])
    extra = ["-o", str(tmp_path / "runs.csv")] if command == "export" else []
    r = run_cli(capsys, command, "latest", *extra, "--db", str(cut))
    one_line(r.code, r.err, f"{cut}: the store file is damaged", "malformed", ".recover")
    assert not (tmp_path / "runs.csv").exists()


@pytest.mark.parametrize("command", ["list", "report latest --json"])
def test_output_to_a_full_disk_is_one_line(command: str, store: Path) -> None:
    """`passhat list > /dev/full` (a full disk behind `> out.json`) ended in "OSError:
    [Errno 28] No space left on device" tracebacks from rich's console or the JSON
    writer (seen on main, exit 1); now one line naming standard output, exit 2."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "passhat", *command.split(), "--db", str(store)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=20,
            check=False,
        )
    one_line(done.returncode, done.stderr, "standard output: cannot write", "No space left")


def test_a_verdict_line_writing_its_status_twice_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "verdicts.jsonl"
    path.write_text('{"case": "a", "run": 1, "status": "passed", "status": "failed"}\n')
    r = run_cli(capsys, "metrics", str(path))
    one_line(r.code, r.err, f"{path}:1", "status")
