"""review54: Ctrl-C while `passhat` is still importing its commands printed Python's
KeyboardInterrupt traceback; it ends as a command interrupted ends: "Aborted!", exit 130."""

from __future__ import annotations

import pytest

from passhat import cli
from passhat.cli import _app


def test_ctrl_c_while_the_commands_load_is_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(name: str | None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_app, "load_commands", interrupted)
    monkeypatch.setattr("sys.argv", ["passhat", "list"])
    monkeypatch.setattr(cli, "_OWN_PROCESS", False)
    monkeypatch.setattr(cli, "_PAUSED", False)
    with pytest.raises(SystemExit) as exit_:
        cli.command()
    assert exit_.value.code == 130
    err = capsys.readouterr().err
    assert err == "\nAborted!\n" and "Traceback" not in err
