"""executors/keys.py without a cluster: which names a cluster process is exec'd without,
one patch of multiprocessing's spawn for overlapping clusters, and the descriptors an
exec'd process gets (review56 read these in fix56's first version)."""

from __future__ import annotations

import os
import sys
import threading
import time
from multiprocessing import util

import pytest

from passhat.executors import keys
from passhat.executors.keys import spawner, spawning_without, withheld


def _environ_of_a_spawn(*names: str) -> list[str]:
    """The values of `names` in a process multiprocessing's spawn (as patched now) starts."""
    read, write = os.pipe()
    try:
        code = (
            f"import os,sys; os.write({write}, "
            "' '.join(os.environ.get(n, '-') for n in sys.argv[1:]).encode())"
        )
        exe = os.fsencode(sys.executable)  # as multiprocessing passes it
        pid = util.spawnv_passfds(exe, [sys.executable, "-c", code, *names], [write])
        os.close(write)
        write = -1
        os.waitpid(pid, 0)
        return os.read(read, 4096).decode().split(" ")
    finally:
        os.close(read)
        if write != -1:
            os.close(write)


def test_names_that_may_carry_a_secret_are_held_back() -> None:
    environ = dict.fromkeys(
        ["MYSQL_PWD", "GH_PAT", "SENTRY_DSN", "DATABASE_URL", "HOME", "PWD", "LANG"], "v"
    )
    assert withheld(environ) == ["DATABASE_URL", "GH_PAT", "MYSQL_PWD", "SENTRY_DSN"]


def test_overlapping_clusters_hold_back_both_sets_and_give_the_spawn_back_last() -> None:
    original = util.spawnv_passfds
    os.environ["KEYS_TEST_A"], os.environ["KEYS_TEST_B"] = "a", "b"
    try:
        first, second = spawning_without(["KEYS_TEST_A"]), spawning_without(["KEYS_TEST_B"])
        first.__enter__()
        second.__enter__()
        assert _environ_of_a_spawn("KEYS_TEST_A", "KEYS_TEST_B") == ["-", "-"]
        first.__exit__(None, None, None)  # the first cluster ends before the second
        assert util.spawnv_passfds is not original
        assert _environ_of_a_spawn("KEYS_TEST_A", "KEYS_TEST_B") == ["a", "-"]
        second.__exit__(None, None, None)
        assert util.spawnv_passfds is original
        assert _environ_of_a_spawn("KEYS_TEST_A", "KEYS_TEST_B") == ["a", "b"]
    finally:
        del os.environ["KEYS_TEST_A"], os.environ["KEYS_TEST_B"]


def test_a_spawned_process_gets_the_descriptors_passed_and_no_other_inheritable_one() -> None:
    stray_read, stray_write = os.pipe()
    os.set_inheritable(stray_write, True)  # as a make jobserver's pipe comes to passhat
    report_read, report_write = os.pipe()  # passed, as multiprocessing passes its pipes
    code = (
        "import os,sys\n"
        "def state(fd):\n"
        "    try: os.fstat(fd); return 'open'\n"
        "    except OSError: return 'closed'\n"
        "os.write(int(sys.argv[2]), (state(int(sys.argv[1])) + ' ' + state(int(sys.argv[2]))).encode())\n"
    )
    try:
        args = [sys.executable, "-c", code, str(stray_write), str(report_write)]
        pid = spawner(dict(os.environ))(sys.executable, args, [report_write])
        os.close(report_write)
        report_write = -1
        os.waitpid(pid, 0)
        assert os.read(report_read, 100).decode() == "closed open"
    finally:
        for fd in (stray_read, stray_write, report_read, report_write):
            if fd != -1:
                os.close(fd)


class _Slow(list[frozenset[str]]):
    """_HELD, slow to say whether it is empty: a thread switch there, every time."""

    def __len__(self) -> int:
        time.sleep(0.0002)
        return super().__len__()


def test_clusters_starting_and_ending_on_threads_give_the_spawn_back_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two clusters may start and end on two threads: unlocked, one's end could pop the
    original spawn while the other's start saw none held (an IndexError, or passhat's own
    spawn kept as the original: patched for good)."""
    monkeypatch.setattr(keys, "_HELD", _Slow())
    monkeypatch.setattr(keys, "_ORIGINAL", [])
    original = util.spawnv_passfds
    errors: list[BaseException] = []

    def clusters() -> None:
        try:
            for _ in range(200):
                with spawning_without(["KEYS_TEST_A"]):
                    pass
        except BaseException as error:  # told below, with the state it left
            errors.append(error)

    threads = [threading.Thread(target=clusters) for _ in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        patched, util.spawnv_passfds = util.spawnv_passfds, original
    assert (errors, patched) == ([], original)
