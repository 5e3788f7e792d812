"""A run that leaves a secret-named file in a folder it closes had every later run errored
(round 15's outside attack).

The look for answers (agents/lookout.py) covers a `.env` wherever it lies in view, by a
mount bwrap makes at its path. bwrap makes it as the run's uid: as passhat's own user
for an unprivileged passhat, as a uid of the run's own under root. A run that left
`d/.env` in its `write:` folder and made `d` mode 0600 (listed, not passed through)
had the next run's look list `d` and cover `d/.env`, where the next run's bwrap could
not reach: "bwrap: Can't create file at .../d/.env: Permission denied", and every later
run of the experiment errored (`agent_exit`, read as the agent crashing on its own, or
`isolation`, passhat's failure: not counted either way, as the agent chose; DESIGN
counts only infrastructure failures as errored). Tried for real at `namespace` under a
root passhat: broke (each run is a uid of its own, a stranger to the folder the last
one made). An unprivileged passhat's runs are its own uid, whose bwrap passes such a
folder by the capabilities it holds in its own user namespace: held, and kept tested.
At `process` (the control) nothing is covered and the later run is counted.

Fixed: a cover is made at the first folder on its path the run may not pass through
(sandbox._passed): what lies past it the run could not reach anyway.

The same by a name: a `.env` under a name in bytes that are no UTF-8 had the next run's
bwrap arguments fail to encode (below).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS, attack_in, runs_at

UNPRIVILEGED = pytest.mark.parametrize("user", ["unprivileged"], indirect=True)


def two_runs(
    user: str, open_tmp: Path, level: str, variable: str = "ATTACK53_PLANT", arg: str = ""
) -> list[RunRecord]:
    """Run 1 of an agent given `variable` (its `write:` folder, `,arg`) leaves there what
    it says (by default `d/.env` in `d` of mode 0600); run 2, one at a time, finds it: both
    runs, at `level`."""
    suite, out = attack_in(open_tmp, variable, arg, agent="attack53_agent.py")
    args = ("--no-report", "--agent-write", str(out), "--concurrency", "1")
    return runs_at(user, open_tmp, suite, level, *args, k=2)


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_folder_a_run_closed_around_a_secret_does_not_stop_the_next_run(
    user: str, open_tmp: Path
) -> None:
    first, second = two_runs(user, open_tmp, "namespace")
    assert first.output == {"plant": "planted"}, (first.error_message, first.stderr)
    assert second.status != "errored", (second.error_type, second.error_message)
    assert second.output == {"plant": ["there", ["d"]]}  # d covered whole: an empty folder


@ATTACK_MARKS[1]
@UNPRIVILEGED
def test_control_at_process_level_the_next_run_is_counted(user: str, open_tmp: Path) -> None:
    first, second = two_runs(user, open_tmp, "process")
    assert first.output == {"plant": "planted"}
    assert second.status != "errored", (second.error_type, second.error_message)


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_secret_names_in_bytes_that_are_no_utf8_or_no_files_do_not_stop_the_next_run(
    user: str, open_tmp: Path
) -> None:
    """A run leaves in its `write:` folder a `.env` in a folder named by a newline, a tab
    and bytes that are no UTF-8, a `.env` so suffixed, a FIFO named `.env` and a socket
    named `.netrc`. The next run's look covered them, but the cover's path went into
    bwrap's arguments encoded as UTF-8: UnicodeEncodeError, and every later run errored
    `agent_error` (the agent's own failure, traceback and all), root and unprivileged
    passhat alike. Fixed: the arguments are encoded as file names are (os.fsencode)."""
    first, second = two_runs(user, open_tmp, "namespace", "ATTACK53_NAMES")
    assert first.output == {"names": "left"}, (first.error_message, first.stderr)
    assert second.status != "errored", (second.error_type, second.traceback)
    there, listed, read = second.output["names"]
    assert (there, listed) == ("there", [".env"])
    assert read in ("", "PermissionError"), read  # covered: not b"NOT_A_KEY=1\n".hex()


@ATTACK_MARKS[1]
@UNPRIVILEGED
def test_control_at_process_level_odd_names_leave_the_next_run_counted(
    user: str, open_tmp: Path
) -> None:
    first, second = two_runs(user, open_tmp, "process", "ATTACK53_NAMES")
    assert first.output == {"names": "left"}
    assert second.status != "errored", (second.error_type, second.error_message)
    assert second.output["names"][2] == b"NOT_A_KEY=1\n".hex()  # nothing covered
