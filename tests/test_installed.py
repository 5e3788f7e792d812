"""agents/installed.py: in a `pip install --target DIR` folder on PYTHONPATH, the files a
package's record lists are no secrets (certifi's cacert.pem stays in view), and nothing
else is uncovered: a `.env` beside the packages, a record's `../.env` or absolute path, a
link, a store named like a certificate, what lies past the records' bounds.

Each test failed on main before the fix (the certificate was covered, or, for the
refusals, `installations` never looked at a record)."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from passhat.agents import installed
from passhat.agents.installed import installations, installed_secrets
from passhat.agents.lookout import secret_files
from passhat.agents.sandbox import covered, real

CERT = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _wheel(folder: Path) -> Path:
    """A wheel of one package, `tinycert`, holding a cacert.pem (made here: no network)."""
    files = {
        "tinycert/__init__.py": b"",
        "tinycert/cacert.pem": CERT,
        "tinycert-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinycert\nVersion: 1.0\n",
        "tinycert-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: passhat-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    lines = []
    path = folder / "tinycert-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            lines.append(f"{name},sha256={digest.decode()},{len(data)}")
        lines.append("tinycert-1.0.dist-info/RECORD,,")
        wheel.writestr("tinycert-1.0.dist-info/RECORD", "\n".join(lines) + "\n")
    return path


def _hidden(target: Path, view: Path | None = None) -> list[str]:
    env = {"PYTHONPATH": str(target)}
    runtimes = installations([sys.executable, "agent.py"], env, [])
    return covered([real(view or target)], [], None, runtimes, look=secret_files)


def _package(target: Path, record: str) -> Path:
    """A package `pkg` in `target` with a key.pem, and a record reading `record`."""
    (target / "pkg").mkdir(parents=True)
    (target / "pkg" / "key.pem").write_bytes(CERT)
    (target / "pkg-1.0.dist-info").mkdir()
    (target / "pkg-1.0.dist-info" / "RECORD").write_text(record)
    return target / "pkg" / "key.pem"


def test_a_package_pip_installed_to_a_target_folder_keeps_its_certificate(
    tmp_path: Path,
) -> None:
    """A real `pip install --target` (of a wheel made here, no index): its cacert.pem is
    in view; a `.env` and a `.netrc` the user keeps beside the packages are covered."""
    target = tmp_path / "pylibs"
    wheel = _wheel(tmp_path)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
    done = subprocess.run(
        [*pip, "--disable-pip-version-check", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (target / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    (target / ".netrc").write_text("machine h login u password p\n")
    hidden = _hidden(target)
    assert real(target / "tinycert" / "cacert.pem") not in hidden
    assert real(target / ".env") in hidden and real(target / ".netrc") in hidden


def test_a_legacy_install_lists_its_files_beside_its_egg_info(tmp_path: Path) -> None:
    """installed-files.txt names its files from the .egg-info folder (`../pkg/key.pem`)."""
    target = tmp_path / "pylibs"
    key = _package(target, "")
    (target / "pkg-1.0.egg-info").mkdir()
    (target / "pkg-1.0.egg-info" / "installed-files.txt").write_text("../pkg/key.pem\n")
    assert real(key) not in _hidden(target)


def test_a_record_naming_files_outside_its_folder_uncovers_none(tmp_path: Path) -> None:
    """The agent's folder holds the packages' folder and a `.env`: a record that lists
    `../.env`, the `.env`'s absolute path, or a link in the packages to it, leaves it
    covered (and the link too)."""
    app = tmp_path / "app"
    target = app / "pylibs"
    secret = app / ".env"
    key = _package(target, f"../.env,,\n{app / '.env'},,\npkg/link.pem,,\npkg/key.pem,,\n")
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("KEY=1\n")
    (target / "pkg" / "link.pem").symlink_to(secret)
    hidden = _hidden(target, view=app)
    assert real(secret) in hidden
    assert real(key) not in hidden  # what the record rightly lists is kept
    assert installed_secrets(real(target)) == [real(key)]


def test_a_listed_file_holding_a_store_stays_covered(tmp_path: Path) -> None:
    """A record is no licence for passhat's answers: a store named key.pem is one."""
    from passhat.store import Store

    target = tmp_path / "pylibs"
    key = _package(target, "pkg/key.pem,,\n")
    key.unlink()
    Store(key).close()
    assert real(key) in _hidden(target)


def test_the_records_read_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record longer than RECORD_BYTES is read that far (what it lists past it stays
    covered, a line cut at the bound too); past RECORDS records or RECORDS_BYTES in all,
    none is read; a FIFO named RECORD is never opened (the look would block)."""
    target = tmp_path / "pylibs"
    filler = "pkg/x.py,,\n" * 1000
    key = _package(target, filler + "pkg/key.pem,,\n")
    monkeypatch.setattr(installed, "RECORD_BYTES", len(filler) + 5)
    assert real(key) in _hidden(target)
    monkeypatch.setattr(installed, "RECORD_BYTES", len(filler) + 20)
    assert real(key) not in _hidden(target)

    for index in range(3):  # read before pkg-1.0's, in name order
        (target / f"a{index}-1.0.dist-info").mkdir()
        (target / f"a{index}-1.0.dist-info" / "RECORD").write_text("a/b.py,,\n")
    monkeypatch.setattr(installed, "RECORDS", 3)
    assert real(key) in _hidden(target)
    monkeypatch.setattr(installed, "RECORDS", 4)
    assert real(key) not in _hidden(target)
    monkeypatch.setattr(installed, "RECORDS_BYTES", len(filler))
    assert real(key) in _hidden(target)

    monkeypatch.setattr(installed, "RECORDS_BYTES", 64 << 20)
    (target / "a0-1.0.dist-info" / "RECORD").unlink()
    os.mkfifo(target / "a0-1.0.dist-info" / "RECORD")
    assert real(key) not in _hidden(target)  # the FIFO passed over, not waited on
