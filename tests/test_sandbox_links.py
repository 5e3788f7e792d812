"""Covering a secret-looking name never follows a link out of its folder.

A run may leave a symlink in a `write:` folder: `.env` -> the interpreter, `.git` -> the
interpreter's folder, `.envrc` -> nothing. A later experiment covers such names (/dev/null
over a file, an empty folder over a folder), and bwrap, mounting over a link, mounts over
what it leads to: the interpreter was hidden (or the mount failed) and every run of that
experiment failed to start. A link that leads out of its folder is left as it is (a link
holds no content; what it leads to is in view or not by the view's own rules); one that
leads inside it is covered where it leads. Tried as root and as an unprivileged user.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_python import PYTHON
from passhat.agents.lookout import secret_files
from passhat.agents.sandbox import View, bwrap_argv, covered
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as


def _links(folder: Path) -> dict[str, Path]:
    """A `write:` folder as a run may leave it: links out of it (to the interpreter, its
    folder, nowhere) under secret-looking names, and one into it (`.env.local`, to a file
    whose own name is no secret)."""
    assert PYTHON is not None
    python = Path(os.path.realpath(PYTHON))
    inside = folder / "settings.txt"
    inside.write_text("TOKEN=from-the-folder\n")
    links = {
        ".env": python,
        ".git": python.parent,
        ".envrc": Path("/nonexistent-passhat/envrc"),
        ".env.local": Path("settings.txt"),
        ".aws": Path("."),  # the folder itself: covering it would hide the whole folder
    }
    for name, target in links.items():
        (folder / name).symlink_to(target)
    return {"python": python, "inside": inside}


@pytest.mark.skipif(PYTHON is None, reason="no Python that other users may run")
def test_a_link_out_of_its_folder_is_not_covered_one_into_it_is_covered_where_it_leads(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    made = _links(folder)
    hide = covered([str(folder)], [], None, look=secret_files)
    assert hide == [str(made["inside"])], hide
    argv = bwrap_argv(View(hide=tuple(hide)), Path("/tmp/passhat-run-x"))
    assert str(made["python"]) not in argv and str(folder / ".env") not in argv


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_links_a_run_left_in_a_write_folder_do_not_stop_later_runs(
    user: str, open_tmp: Path
) -> None:
    out = open_tmp / "out"
    out.mkdir()
    files = [str(out / "settings.txt"), str(out / ".env.local")]
    suite = attack_suite(open_tmp / "work", {"ATTACK_FILES": ",".join(files)})
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    made = _links(out)  # after the chmod: a chmod through a link changed the interpreter
    made["inside"].chmod(0o666)
    db = open_tmp / "p.db"
    args = ["-k", "1", "--timeout", "120", "--isolation", "namespace", "--db", str(db), "-q"]
    done = passhat_as(
        user, open_tmp, "run", str(suite), *args, "--agent-write", str(out), "--no-report"
    )
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    assert isinstance(run.output, dict) and run.output["secrets"] == [], run.output
    assert all(
        (out / name).is_symlink() for name in (".env", ".git", ".envrc", ".env.local", ".aws")
    )
