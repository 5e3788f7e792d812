"""A headless Chromium page driven over its DevTools protocol, as Playwright drives one:
open a URL, evaluate script in the page, wait for a condition, and collect every
console error, uncaught exception and refused (CSP) load on the way. For pages a
server serves (passhat view); tests/browser.py has the file-page helpers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from browser import ARTIFACTS, _Chromium, _Devtools, devtools_tab


class _Recording(_Devtools):
    """The DevTools pipe, keeping the events that arrive while commands are answered."""

    def __init__(self, browser: _Chromium, deadline: float) -> None:
        super().__init__(browser, deadline)
        self.events: list[dict[str, Any]] = []

    def _next(self) -> dict[str, Any]:
        message = super()._next()
        if "method" in message:
            self.events.append(message)
        return message


class Page:
    """One tab: `goto`, `evaluate`, `wait_for`, `errors`, `screenshot`."""

    def __init__(self, cdp: _Recording) -> None:
        self.cdp = cdp

    def goto(self, url: str, timeout: float = 30) -> None:
        self.cdp.deadline = time.monotonic() + timeout
        self.cdp.call("Page.navigate", {"url": url})
        self.cdp.wait("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        self.cdp.deadline = time.monotonic() + 30
        answer = self.cdp.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60, every: float = 0.05) -> float:
        """Seconds until `expression` is truthy in the page; fails after `timeout`, which
        only bounds a failure: a loaded machine may take long to draw what a page shows."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.evaluate(expression):
                return time.monotonic() - start
            time.sleep(every)
        raise AssertionError(f"not true within {timeout} s: {expression}")

    def html(self) -> str:
        return str(self.evaluate("document.documentElement.outerHTML"))

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and refused loads seen so far."""
        found = []
        for event in self.cdp.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(json.dumps(params.get("args"))[:500])
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(params["entry"].get("text", "")[:500])
        return found

    def screenshot(self, name: str, width: int = 1280) -> Path:
        """A full-page PNG in test-artifacts/<name>.png."""
        height = self.cdp.call("Page.getLayoutMetrics")["cssContentSize"]["height"]
        clip = {"x": 0, "y": 0, "width": width, "height": min(height, 4000), "scale": 1}
        shot = self.cdp.call(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
        )
        import base64

        ARTIFACTS.mkdir(exist_ok=True)
        out = ARTIFACTS / f"{name}.png"
        out.write_bytes(base64.b64decode(shot["data"]))
        return out


@contextmanager
def chromium_page(width: int = 1280, timeout: float = 120) -> Iterator[Page]:
    """A fresh tab (a browser context of its own) of the test process's headless Chromium,
    its console and errors recorded."""
    with devtools_tab(width=width, timeout=timeout, protocol=_Recording) as cdp:
        for domain in ("Page", "Runtime", "Log"):
            cdp.call(f"{domain}.enable")
        assert isinstance(cdp, _Recording)
        yield Page(cdp)
