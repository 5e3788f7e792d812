"""The providers against a real third-party server: LiteLLM's proxy, with mock models.

Not our own fake (tests/fakeserver.py): LiteLLM parses what we send with its own
models, so a wire format only our fake accepts fails here. The proxy runs on
127.0.0.1 with `mock_response` / `mock_tool_calls` models and calls nothing.

LiteLLM's proxy is heavy (about 750 MB and 8 minutes to install here, 40 s to
start on a loaded 2-core machine), so it is an optional extra rather than part
of `make test`: `make test-litellm` installs `passhat[litellm]` and runs this
module. `PASSHAT_LITELLM=/path/to/litellm` uses a proxy installed elsewhere.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import run_cli, run_seed
from passhat.errors import TransientModelError
from passhat.models.anthropic_api import AnthropicModel
from passhat.models.base import CallContext, Message, ToolSpec
from passhat.models.openai_compat import OpenAIModel
from passhat.models.retry import generate_with_retry


def _litellm() -> list[str] | None:
    given = os.environ.get("PASSHAT_LITELLM")
    if given:
        return [given]
    if importlib.util.find_spec("litellm") is not None:
        found = shutil.which("litellm", path=str(Path(sys.executable).parent))
        return [found] if found else None
    return None


COMMAND = _litellm()
pytestmark = pytest.mark.skipif(
    COMMAND is None,
    reason="LiteLLM's proxy is not installed: `make test-litellm` (pip install "
    "'passhat[litellm]', ~750 MB) or PASSHAT_LITELLM=/path/to/litellm",
)

MASTER_KEY = "sk-passhat-litellm-master-0123456789"
CONFIG = """
router_settings: {num_retries: 0}
litellm_settings: {num_retries: 0}
model_list:
  - model_name: mock-text
    litellm_params: {model: openai/mock-text, api_key: unused, mock_response: "hello from litellm"}
  - model_name: mock-tools
    litellm_params:
      model: openai/mock-tools
      api_key: unused
      mock_tool_calls:
        - id: call_1
          type: function
          function: {name: get_ticket, arguments: '{"key": "SHOP-1042"}'}
  - model_name: mock-500
    litellm_params: {model: openai/mock-500, api_key: unused, mock_response: "litellm.InternalServerError"}
  - model_name: mock-429
    litellm_params: {model: openai/mock-429, api_key: unused, mock_response: "litellm.RateLimitError"}
"""
GET_TICKET = ToolSpec(
    "get_ticket",
    "Read a ticket by key.",
    {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)
CTX = CallContext("c", 1, 0, None)


@pytest.fixture(scope="module")
def litellm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The proxy's root URL, on a free port of 127.0.0.1."""
    assert COMMAND is not None
    folder = tmp_path_factory.mktemp("litellm")
    (folder / "config.yaml").write_text(CONFIG, encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "LITELLM_MASTER_KEY": MASTER_KEY, "LITELLM_TELEMETRY": "False"}
    log = (folder / "proxy.log").open("w")
    argv = [*COMMAND, "--config", "config.yaml", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"LiteLLM's proxy exited: {(folder / 'proxy.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("LiteLLM's proxy did not start within 180 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", MASTER_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", MASTER_KEY)
    return MASTER_KEY


async def test_a_tool_call_and_its_result_go_back_as_litellm_accepts_them(
    litellm: str, key: str
) -> None:
    async with OpenAIModel("mock-tools", base_url=f"{litellm}/v1") as tools:
        first = await tools.generate([Message("user", "read SHOP-1042")], [GET_TICKET], CTX)
    (called,) = first.message.tool_calls
    assert (called.name, called.arguments) == ("get_ticket", {"key": "SHOP-1042"})
    conversation = [
        Message("user", "read SHOP-1042"),
        Message("assistant", "", tool_calls=first.message.tool_calls),
        Message("tool", '{"title": "Coupons"}', tool_call_id=called.id, name="get_ticket"),
    ]
    async with OpenAIModel("mock-text", base_url=f"{litellm}/v1") as text:
        second = await text.generate(conversation, [GET_TICKET], CTX)
    assert second.message.content == "hello from litellm"


async def test_litellm_errors_are_transient_and_retried(litellm: str, key: str) -> None:
    for model, status in (("mock-500", 500), ("mock-429", 429)):
        async with OpenAIModel(model, base_url=f"{litellm}/v1") as failing:
            made: list[dict[str, object]] = []

            async def no_wait(_: float) -> None:
                return None

            with pytest.raises(TransientModelError, match=f"HTTP {status}"):
                await generate_with_retry(
                    failing,
                    [Message("user", "hi")],
                    [],
                    CTX,
                    max_retries=2,
                    sleep=no_wait,
                    record=made,
                )
            assert len(made) == 2


async def test_anthropic_messages_through_litellm(litellm: str, key: str) -> None:
    async with AnthropicModel("mock-text", base_url=litellm) as model:
        answer = await model.generate([Message("user", "hi")], [], CTX)
    assert answer.message.content == "hello from litellm"


def test_a_tool_using_run_through_litellm_is_graded_not_errored(
    litellm: str, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The clarifier calls get_ticket every turn (the mock always asks for it) until its
    turn limit: every turn after the first sends a tool call and its result back."""
    db = tmp_path / "p.db"
    r = run_seed(
        capsys,
        "--model",
        "openai:mock-tools",
        "--base-url",
        f"{litellm}/v1",
        "--max-turns",
        "3",
        "-k",
        "1",
        "--db",
        str(db),
        "-q",
    )
    assert r.code == 0, r.err
    shown = run_cli(capsys, "show", "latest", "ac-conflict-001", "1", "--db", str(db))
    assert "failed" in shown.out.splitlines()[0]  # graded: the mock never writes the ticket
    assert shown.out.count("get_ticket") >= 3
    assert all(MASTER_KEY.encode() not in f.read_bytes() for f in tmp_path.glob("p.db*"))
