"""Start-up: commands that compute no statistic do not import numpy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from passhat._lazy import BLAS_THREADS

PROBE = """
import sys
from passhat.cli import main
try:
    main({args!r})
except SystemExit:
    pass
# numpy may be in sys.modules as a lazy module; its code ran only if its core did
print("numpy._core" in sys.modules or "numpy.core" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["list", "--db", "x.db"]])
def test_commands_without_statistics_do_not_import_numpy(args: list[str], tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == "False"


def test_statistics_still_work_once_numpy_is_needed() -> None:
    from passhat.accounting import account
    from passhat.stats import uncertainty

    u = uncertainty(account([("a", 1, "passed"), ("b", 1, "failed")], 1), m=2, seed=0)
    assert u.dataset is not None and 0 <= u.dataset.pass_at_1.low <= 0.5


DEFERRED = """
import sys
from passhat._lazy import lazy_import, warm_up
np = lazy_import("numpy")
print("numpy" in sys.modules)  # not yet: no half-made module for another thread to meet
warm_up("numpy").join()
print(np.ndarray is sys.modules["numpy"].ndarray, np.random.default_rng is not None)
"""


def test_a_deferred_module_is_imported_by_the_import_system_from_any_thread() -> None:
    """A deferred module stands outside sys.modules until it is used, so a `warm_up`
    thread importing it and a reader in another thread both go through the import
    system's locks (a LazyLoader module in sys.modules runs its code in whichever
    thread reads first, and on 3.11 a second reader meanwhile meets a half-made one)."""
    done = subprocess.run(
        [sys.executable, "-c", DEFERRED], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "True", "True"]


HEAVY = (
    "passhat.cli.run",
    "passhat.cli._run_options",
    "passhat.cli._events",
    "passhat.store",
    "passhat.stats",
    "asyncio",
    "rich.console",
    "rich.progress",
)
# what `passhat list` and `passhat report` need: not the runner's modules (cli/run.py),
# its event loop or progress bar; nor the statistics, which `passhat report` loads
# while its store is read (cli/read.py); nor rich's console, made when something is
# printed (`report --json` prints none; the terminal report's tables load it while
# the store is read)
REPORTING = ["passhat.store"]

IMPORTS = """
import sys
from passhat.cli import main
try:
    main({args!r})
except SystemExit:
    pass
print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "imported"),
    [
        pytest.param(["--help"], [], id="--help"),
        pytest.param([], [], id="no-args"),
        pytest.param(["--version"], ["rich.console"], id="--version"),
        pytest.param(["check", "--help"], ["rich.console"], id="check"),
        pytest.param(["metrics", "--help"], ["passhat.stats", "rich.console"], id="metrics"),
        pytest.param(["list", "--help"], REPORTING, id="list"),
        pytest.param(["report", "--help"], REPORTING, id="report"),
    ],
)
def test_a_command_imports_only_its_own_module(
    args: list[str], imported: list[str], tmp_path: object
) -> None:
    """`passhat --help` lists the commands from a table and imports none of them;
    `passhat NAME` imports NAME's module (what it needs), not every command's."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS.format(args=args, heavy=HEAVY)],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == str(sorted(imported))


THREADS = """
import os, sys
from passhat.cli import main
try:
    main({args!r})
except SystemExit:
    pass
assert "numpy._core" in sys.modules  # the statistics loaded numpy
print(len(os.listdir("/proc/self/task")), file=sys.stderr)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_a_reading_command_starts_no_blas_thread_pool(tmp_path: Path) -> None:
    """numpy's OpenBLAS starts a thread pool when it loads (50 ms of CPU for a report
    whose matrices one thread multiplies in microseconds): commands that run no user
    code ask for one thread, and a number the user chose is kept."""
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text(
        '{"case": "c", "run": 1, "status": "passed"}\n{"case": "c", "run": 2, "status": "failed"}\n',
        encoding="utf-8",
    )
    probe = THREADS.format(args=["metrics", str(verdicts)])
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}

    def threads(**extra: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env={**env, **extra},
        )
        return int(done.stderr.strip().splitlines()[-1])

    chosen = threads(OPENBLAS_NUM_THREADS="2")
    if chosen < 2:
        pytest.skip("this numpy's BLAS starts no thread pool")
    assert threads() == 1


def test_a_reading_command_runs_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Loading a reading command's modules allocates thousands of objects that stay
    alive; the cyclic collector is paused while it loads and runs, and on again after."""
    import gc

    import passhat.cli.read as read
    from cli_helpers import run_cli
    from passhat.errors import InputError

    seen: list[bool] = []

    def spy(*args: object, **kwargs: object) -> None:
        seen.append(gc.isenabled())
        raise InputError("stop here")

    monkeypatch.setattr(read, "open_store", spy)
    assert gc.isenabled()
    result = run_cli(capsys, "list")
    assert (result.code, seen, gc.isenabled()) == (2, [False], True)


def test_a_report_without_requirements_does_not_import_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`passhat report` imports what it shows: --require's module only when asked, and
    for runs passhat made no `passhat.sources` (the header's lines on where imported runs
    came from, and `secrets` with it: a few ms of every report's start); `report --json`
    for a pipe no rich (its tables are the terminal report's: 20-25 ms)."""
    from cli_helpers import run_seed

    db = str(tmp_path / "p.db")
    assert run_seed(capsys, "--k", "2", "--db", db).code == 0

    def imported(*extra: str) -> str:
        args = ["report", "latest", "--db", db, "--no-why", *extra]
        heavy = ("passhat.gate", "passhat.sources", "rich.console")
        done = subprocess.run(
            [sys.executable, "-c", IMPORTS.format(args=args, heavy=heavy)],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stderr.strip().splitlines()[-1]

    assert imported() == "['rich.console']"
    assert imported("--json") == "[]"  # for a pipe: no rich (passhat.report.json_frame)
    assert imported("--require", "rate>=0") == "['passhat.gate', 'rich.console']"


def test_an_in_process_agents_run_imports_no_command_agent_machinery(tmp_path: Path) -> None:
    """`passhat run` of an in-process agent does not import what command agents (their
    process, folders, sandbox, MCP server, the hub that serves them), the built-in
    clarifier or adaptive rounds
    need (a run without --until-width or --until-decided), nor pydantic: a suite of
    plain valid data is parsed by suite/shapes.py's tables; nor importlib.resources (8 ms)
    for the replay model's cassette schema; nor the sandbox (its registry of the paths kept
    out of view, agents/protected.py, takes the store)."""
    from cli_helpers import CLARIFY, SEED

    unused = ("passhat.agents.command", "passhat.agents.clarifier", "passhat.serve.app")
    unused += ("passhat.serve.hub",)  # made by its scope's first served run (serve._Scope)
    unused += ("passhat.rounds", "passhat.adaptive", "pydantic", "passhat.suite.validation")
    unused += ("importlib.resources",)  # the replay cassette's schema is read beside its module
    unused += ("passhat.agents.sandbox",)  # the store is kept out of view by agents/protected.py
    args = ["run", str(CLARIFY), "--case", SEED, "--agent", "agents_for_tests:odd_runs_pass"]
    args += ["-k", "1", "-q", "--db", str(tmp_path / "p.db")]
    tests = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS.format(args=args, heavy=unused)],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]),
        },
    )
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert "1/1" in done.stdout or "0/1" in done.stdout  # the run was made


AT_FIRST_RUN = """
import sys
from passhat import runner
from passhat.cli import main

make_runs = runner.run_experiment

async def first_run(*args, **kwargs):
    heavy = sorted(m for m in {heavy!r} if m in sys.modules)
    print("before the runs:", heavy, file=sys.stderr)
    return await make_runs(*args, **kwargs)

runner.run_experiment = first_run
try:
    main({args!r})
except SystemExit:
    pass
"""


def test_a_quiet_run_imports_no_report_modules_before_its_runs(tmp_path: Path) -> None:
    """`passhat run -q` has printed nothing when its runs start, and has imported neither
    rich (the end report's, imported while the runs wait) nor pydantic-core (the runs'
    JSON encoder, imported by the store's writer thread then: the experiment's own row
    is written by the standard library's encoder). Either one's import came before the
    first run, 20-40 ms of an end-to-end run each. Nor the accounting and the metrics
    under it (the end report's, imported by its warm-up: a run's record needs only the
    name of its statuses, passhat.plain.Status), 10 ms and 12 dataclasses before the runs."""
    from cli_helpers import CLARIFY, SEED

    heavy = ("rich", "rich.console", "rich.text", "pydantic_core", "numpy")
    heavy += ("passhat.accounting", "passhat.metrics")
    args = ["run", str(CLARIFY), "--case", SEED, "--agent", "agents_for_tests:odd_runs_pass"]
    args += ["-k", "2", "-q", "--db", str(tmp_path / "p.db")]
    done = _with_test_modules(AT_FIRST_RUN.format(args=args, heavy=heavy))
    assert done.returncode == 0, done.stderr
    assert "before the runs: []" in done.stderr.splitlines()
    assert "2/2" in done.stdout or "1/2" in done.stdout or "0/2" in done.stdout  # the report


def test_a_run_without_its_report_imports_none_of_the_reports_modules(tmp_path: Path) -> None:
    """`passhat run --no-report` prints one line where the report would be: it imported
    passhat.report.experiment (the report's figures and tables) all the same, about 25 ms
    of the CPU of a whole run of one command agent (0.4 s)."""
    from cli_helpers import CLARIFY, SEED

    heavy = ("passhat.report.experiment", "numpy")
    args = ["run", str(CLARIFY), "--case", SEED, "--agent", "agents_for_tests:odd_runs_pass"]
    args += ["-k", "1", "-q", "--no-report", "--db", str(tmp_path / "p.db")]
    done = _with_test_modules(IMPORTS.format(args=args, heavy=heavy))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
    assert "1 run recorded" in done.stderr


CYCLE: list[object] = []
CYCLE.append(CYCLE)


@pytest.mark.parametrize(
    "value",
    [
        {"temperature": 0.7, "max_turns": 3, "timeout_s": 300.0, "ids": ("a", "b")},
        {"text": 'é中\n"', "none": None, "yes": True, "big": 10**30, "small": 5e-324},
        {"nan": float("nan")},  # null, as the runs' encoder writes it
        {"set": {1}},
        {None: 1},
        {"path": Path("/x")},
        "\ud800",  # a lone surrogate, escaped
        CYCLE,  # a list that contains itself: "<circular reference>"
    ],
)
def test_an_experiments_columns_read_back_as_the_runs_encoder_writes_them(value: object) -> None:
    """The experiment's own row is written without pydantic-core (store.columns
    `_encode_small`): what it writes reads back as what pydantic-core's encoder writes
    (`_encode`), whatever the value; only plain JSON data takes the standard library."""
    import json

    from passhat.store.columns import _encode, _encode_small

    assert json.loads(_encode_small(value)) == json.loads(_encode(value))


def test_evaluate_without_requirements_does_not_import_the_gate(tmp_path: Path) -> None:
    """`passhat.evaluate` imports --require's module only when given requirements (the
    CLI's end report judges the gate, its module imported while the runs wait)."""
    from cli_helpers import CLARIFY, SEED

    probe = (
        "import sys, passhat\n"
        f"passhat.evaluate({str(CLARIFY)!r}, agent='agents_for_tests:odd_runs_pass', k=1,"
        f" cases=[{SEED!r}], db={str(tmp_path / 'p.db')!r})\n"
        "print('passhat.gate' in sys.modules)\n"
    )
    done = _with_test_modules(probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "False"


def _with_test_modules(probe: str) -> subprocess.CompletedProcess[str]:
    """`probe` run by a fresh interpreter that imports the tests' helper modules."""
    tests = str(Path(__file__).parent)
    return subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]),
        },
    )


def test_the_end_reports_warm_up_has_ended_when_the_runs_have(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`passhat run` imports the end report's modules in a thread while its runs wait; when
    a round of runs ends, that thread has ended: the statistics and the report import in
    the main thread next, and two threads importing into each other's modules on 3.11
    gave one a half-made numpy ('partially initialized module numpy has no attribute
    fromiter', seen in `passhat resume` of a killed experiment)."""
    import threading

    from passhat import _lazy
    from passhat.cli._events import printer
    from passhat.records import RunRecord

    slow: list[threading.Thread] = []

    def warm_up(*names: str) -> threading.Thread:
        thread = threading.Thread(target=threading.Event().wait, args=(0.5,), daemon=True)
        thread.start()
        slow.append(thread)
        return thread

    monkeypatch.setattr(_lazy, "warm_up", warm_up)
    events = printer("en", quiet=True)
    events.recorded(RunRecord("e", "c", 1, "h", "passed"))
    events.round_ended(None)  # type: ignore[arg-type]
    assert len(slow) == 1 and not slow[0].is_alive()


def test_the_end_report_imports_numpys_random_in_the_warm_up_not_after_the_runs(
    tmp_path: Path,
) -> None:
    """e2e55: numpy loads numpy.random at its first use, the intervals' bootstrap in the
    end report, which imported it in the command's own thread once the runs had ended
    (12 ms under chrt, ~0.5 % of the 1,000-run benchmark): the warm-up that loads numpy
    among the runs loads it too."""
    from cli_helpers import CLARIFY, SEED

    probe = (
        "import importlib.abc, sys, threading\n"
        "where = []\n"
        "class Seen(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'numpy.random':\n"
        "            where.append(threading.current_thread().name)\n"
        "sys.meta_path.insert(0, Seen())\n"
        "from passhat.cli import main\n"
        f"args = ['run', {str(CLARIFY)!r}, '--case', {SEED!r}, '--case', "
        "'clean-order-tracking-002', '--agent', 'agents_for_tests:odd_runs_pass', '-k', '2',"
        f" '-q', '--db', {str(tmp_path / 'p.db')!r}]\n"
        "try:\n    main(args)\nexcept SystemExit:\n    pass\n"
        "print(where, file=sys.stderr)\n"
    )
    done = _with_test_modules(probe)
    assert done.stderr.splitlines()[-1] == "['passhat-warm-up']", done.stderr


def test_the_end_reports_warm_up_loads_numpy_with_a_short_blas_spin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up loads numpy among the runs' timers: OpenBLAS's idle threads are asked to
    spin 2**20 cycles, not their 2**28 (a tenth of a second of a core, from the moment it
    loads), unless the user chose a value; once numpy is loaded nothing is changed."""
    import threading
    import types

    from passhat import _lazy
    from passhat.cli._events import printer
    from passhat.records import RunRecord

    seen: list[str | None] = []

    def warm_up(*names: str) -> threading.Thread:
        seen.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
        thread = threading.Thread(target=lambda: None, daemon=True)
        thread.start()
        return thread

    def warmed(environ: dict[str, str], numpy_loaded: bool) -> str | None:
        monkeypatch.setattr(os, "environ", environ)
        if numpy_loaded:  # (a stand-in: nothing here imports it)
            monkeypatch.setitem(sys.modules, "numpy", types.ModuleType("numpy"))
        else:
            monkeypatch.delitem(sys.modules, "numpy", raising=False)
        events = printer("en", quiet=True)
        events.recorded(RunRecord("e", "c", 1, "h", "passed"))
        events.round_ended(None)  # type: ignore[arg-type]
        return seen.pop()

    monkeypatch.setattr(_lazy, "warm_up", warm_up)
    assert warmed({"GOTO_THREAD_TIMEOUT": "28"}, numpy_loaded=False) is None  # the user's
    assert warmed({"OPENBLAS_THREAD_TIMEOUT": "25"}, numpy_loaded=False) == "25"
    assert warmed({}, numpy_loaded=True) is None  # loaded: its pool spins as it was made
    assert warmed({}, numpy_loaded=False) == str(_lazy.BLAS_SPIN_LOG2)


def test_a_bad_suite_is_still_named_by_the_strict_models(tmp_path: Path) -> None:
    """A suite the plain tables leave to validation.py's models (here a case's input that
    is a list) gets the models' message, naming the file, the field and the fix."""
    import shutil

    from cli_helpers import CLARIFY, SEED

    suite = tmp_path / "suite"
    shutil.copytree(CLARIFY, suite)
    case = suite / "cases" / f"{SEED}.yaml"
    case.write_text(
        case.read_text(encoding="utf-8").replace("input:", "input: [1]\nold_input:", 1),
        encoding="utf-8",
    )
    probe = (
        "import sys\n"
        "from passhat.errors import SuiteError\n"
        "from passhat.suite import load_suite\n"
        f"try:\n    load_suite({str(suite)!r})\n"
        "except SuiteError as error:\n    print(error.problems)\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    problems, imported = done.stdout.strip().splitlines()[-2:]
    assert f"cases/{SEED}.yaml: input: expected a mapping ('key: value' lines), got [1]" in problems
    assert "old_input" in problems  # the stray key is named too, by the model
    assert imported == "True"


def test_a_users_object_is_finalized_as_passhat_exits(tmp_path: Path) -> None:
    """A command that runs a user's code ends as Python ends: an object of theirs in a
    reference cycle, alive at exit, is still finalized (its buffered file flushed). A
    heap frozen at exit (gc.freeze, tried for speed) lost what such an object held."""
    log = tmp_path / "log.txt"
    probe = (
        "import sys\n"
        "class Holder:\n"
        "    def __init__(self):\n"
        f"        self.file = open({str(log)!r}, 'w')\n"
        "        self.me = self\n"
        "holder = Holder()\n"
        "holder.file.write('written before exit')\n"
        "sys.argv = ['passhat', 'run', '--help']\n"
        "from passhat.cli import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert log.read_text(encoding="utf-8") == "written before exit"


HOLDER_AGENT = """
import gc

class Holder:
    def __init__(self, path):
        self.file = open(path, "w")
        self.me = self

holder = Holder({log!r})
holder.file.write("start-up frozen before this module: " + str(gc.get_freeze_count() > 0))
holder.file.write(f"; collector on: {{gc.isenabled()}}, young threshold {{gc.get_threshold()[0]}}")

async def agent(input, env, ctx):
    return "ok"
"""


def test_passhat_runs_own_process_sets_aside_its_start_up_not_the_users_objects(
    tmp_path: Path,
) -> None:
    """`python -m passhat run` (the command in a process of its own) sets aside from the
    collector what its start-up built before it loads the user's code, which makes its
    teardown's collections shorter; an object of the user's agent module in a
    reference cycle, alive at exit, is still finalized (its buffered file flushed). The
    collector, paused until then, is on again, its young generation collected every
    10,000 net new containers (the runs' spacing) for the rest of the command."""
    import shutil

    from cli_helpers import CLARIFY, SEED

    suite = tmp_path / "suite"
    shutil.copytree(CLARIFY, suite)
    log = tmp_path / "log.txt"
    (suite / "holder.py").write_text(HOLDER_AGENT.format(log=str(log)), encoding="utf-8")
    args = ["run", str(suite), "--case", SEED, "--agent", "holder.py:agent", "-k", "1"]
    args += ["-q", "--no-report", "--db", str(tmp_path / "p.db")]
    done = subprocess.run(
        [sys.executable, "-m", "passhat", *args], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode in (0, 1), done.stderr  # the run counted, passed or not
    written = log.read_text(encoding="utf-8")
    assert written == (
        "start-up frozen before this module: True; collector on: True, young threshold 10000"
    )


def test_quick_switching_is_undone_when_the_last_body_asking_for_it_ends() -> None:
    """Two bodies that each want quick thread switches (the runs, and the end report's
    warm-up begun among them) may end in either order: the interval the interpreter had
    comes back when the last one ends, not when the first does (which left the other
    without it), nor never (a warm-up outliving the runs restored the runs' 0.5 ms)."""
    import contextlib

    from passhat._lazy import WARM_UP_SWITCH_S, quick_switching

    before = sys.getswitchinterval()
    for first_out in ("runs", "warm-up"):
        bodies = {"runs": contextlib.ExitStack(), "warm-up": contextlib.ExitStack()}
        bodies["runs"].enter_context(quick_switching())
        bodies["warm-up"].enter_context(quick_switching())
        bodies[first_out].close()
        assert sys.getswitchinterval() == WARM_UP_SWITCH_S
        bodies["warm-up" if first_out == "runs" else "runs"].close()
        assert sys.getswitchinterval() == before


MEANWHILE = """
import sys, threading
sys.path.insert(0, {folder!r})
from passhat._lazy import imported_meanwhile
switch = sys.getswitchinterval()
with imported_meanwhile("probe_thread"):
    during = threading.active_count()
    assert sys.getswitchinterval() < switch  # the body takes the GIL back sooner
assert sys.getswitchinterval() == switch
import probe_thread
with imported_meanwhile("probe_thread"):  # imported already: no thread
    again = threading.active_count()
print(during, probe_thread.THREAD != threading.main_thread().name, again, threading.active_count())
"""


def test_imported_meanwhile_imports_in_a_thread_done_when_the_body_ends(tmp_path: Path) -> None:
    """`imported_meanwhile` imports its modules in a second thread while the body runs
    (`passhat report`'s tables and numpy while SQLite reads), done when the body ends,
    the interpreter switching threads more often meanwhile; a module already imported
    costs no thread."""
    (tmp_path / "probe_thread.py").write_text(
        "import threading, time\ntime.sleep(0.2)\nTHREAD = threading.current_thread().name\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", MEANWHILE.format(folder=str(tmp_path))],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["2", "True", "1", "1"]
