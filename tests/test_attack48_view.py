"""`passhat view` writes its beacon only in a folder of its user's own (round 10's outside
attack): the folder `/tmp/passhat-view-<uid>` has a name anyone can foresee, and the
beacon's name is a hash of the store's path. Another local user who made that folder
first (with a link named like the beacon to a file of the view's user: ~/.bashrc, the
store) had the view follow the link and write its URL, token included, over that file:
`announced` made the folder with exist_ok and opened the beacon with O_CREAT | O_TRUNC,
following links (the kernel's protected_symlinks guards only sticky, world-writable
folders, and this one is the other user's). `view_of` already refused such a folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from passhat.view.beacon import announced, beacon_path, view_of

NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="makes a folder as another user: needs root")
def test_the_view_writes_no_beacon_in_a_folder_another_user_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp is
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    db, victim = tmp_path / "passhat.db", tmp_path / "bashrc"
    victim.write_text("the user's own file\n")
    folder = beacon_path(db).parent  # made first by another user, a link in it
    folder.mkdir()
    beacon_path(db).symlink_to(victim)
    os.lchown(beacon_path(db), NOBODY, NOBODY)
    os.chown(folder, NOBODY, NOBODY)
    with announced(db, "http://127.0.0.1:8765/?token=secret"):
        assert view_of(db) is None
    assert victim.read_text() == "the user's own file\n", "the view wrote through the link"
    assert beacon_path(db).is_symlink(), "the other user's link was touched"


def test_the_view_still_announces_itself_in_its_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    db = tmp_path / "passhat.db"
    with announced(db, "http://127.0.0.1:8765/") as path:
        assert view_of(db) == "http://127.0.0.1:8765/" and path.parent.stat().st_mode & 0o077 == 0
    assert not path.exists()
