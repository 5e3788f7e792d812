"""Headless Chromium for the HTML report's tests and benchmark.

Debian's `chromium` package (`make test` installs it). The browser runs with no
sandbox, no GPU, no network chatter and a throw-away profile. A test process
starts one and opens each page in a fresh tab and browser context of its own,
over the DevTools pipe (conftest kills it after each module): `dump_dom` reads the
DOM after the page's scripts ran (virtual time lets them finish), as `chromium
--dump-dom` prints it, and `screenshot` writes a PNG. `dump_dom_process` starts a
Chromium for its one page (the benchmark's load time counts that start).

When Chromium is missing, tests that need it fail with a message saying how to
get it; set PASSHAT_SKIP_BROWSER=1 to skip them instead.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import itertools
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
SKIP_ENV = "PASSHAT_SKIP_BROWSER"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    """Path of a Chromium binary, or None."""
    for path in CANDIDATES:
        if Path(path).is_file() and os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def require_chromium() -> str:
    """Chromium's path; fail (or skip with PASSHAT_SKIP_BROWSER=1) when it is missing."""
    path = find_chromium()
    if path:
        return path
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"Chromium not installed and {SKIP_ENV}=1")
    pytest.fail(
        "Chromium is not installed (looked for /usr/bin/chromium): run `make test`, which "
        f"installs it (apt-get install -y chromium), or set {SKIP_ENV}=1 to skip browser tests",
        pytrace=False,
    )


def _run(args: list[str], timeout: float) -> str:
    """Run a Chromium of its own in its own process group (killed whole on timeout);
    return stdout."""
    binary = require_chromium()
    with tempfile.TemporaryDirectory(prefix="passhat-chromium-") as profile:
        proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RuntimeError(f"chromium did not finish in {timeout} s: {args}") from None
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exited with {proc.returncode}: {err[-2000:]}")
    return out


def url(page: Path, fragment: str = "") -> str:
    return page.resolve().as_uri() + (f"#{fragment}" if fragment else "")


# What `chromium --dump-dom` prints: the doctype, then the document's markup.
_DOM = (
    "(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' : '')"
    " + document.documentElement.outerHTML"
)
# The page's viewport: `chromium --headless`'s default window (its own page area is a
# little smaller, 780 × 437, what is left of the window beside the browser's frame).
_WINDOW = (800, 600)


def dump_dom(page: Path, fragment: str = "", *, budget_ms: int = 5000, timeout: float = 120) -> str:
    """The page's DOM after its scripts ran, as HTML: what `chromium --dump-dom
    --virtual-time-budget` prints, read in a fresh tab of the test process's browser."""
    with _loaded(page, fragment, _WINDOW, budget_ms, timeout) as cdp:
        answer = cdp.call("Runtime.evaluate", {"expression": _DOM, "returnByValue": True})
    return str(answer["result"]["value"]) + "\n"


def dump_dom_process(
    page: Path, fragment: str = "", *, budget_ms: int = 5000, timeout: float = 120
) -> str:
    """`dump_dom` by a Chromium started for this page alone (`chromium --dump-dom`):
    its start-up is counted, as benchmarks/bench_html.py's load time subtracts it."""
    return _run([f"--virtual-time-budget={budget_ms}", "--dump-dom", url(page, fragment)], timeout)


def screenshot(
    page: Path,
    name: str,
    *,
    fragment: str = "",
    size: tuple[int, int] = (1280, 2400),
    budget_ms: int = 5000,
    timeout: float = 120,
) -> Path:
    """A PNG of the page's first `size` pixels in test-artifacts/<name>.png (what
    `chromium --screenshot --window-size` writes)."""
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    out.unlink(missing_ok=True)
    with _loaded(page, fragment, size, budget_ms, timeout) as cdp:
        shot = cdp.call("Page.captureScreenshot", {"format": "png"})
    out.write_bytes(base64.b64decode(shot["data"]))
    return out


def load_seconds(page: Path, *, budget_ms: int = 1000, timeout: float = 300) -> float:
    """Wall time for Chromium to start, load the page, run its scripts and dump the DOM."""
    start = time.perf_counter()
    dump_dom_process(page, budget_ms=budget_ms, timeout=timeout)
    return time.perf_counter() - start


def full_page_png(
    page: Path, fragment: str = "", *, width: int = 1280, scale: float = 0.25, timeout: float = 120
) -> bytes:
    """A full-page screenshot taken as Playwright takes one: Chromium's DevTools protocol
    (over a pipe), the page's whole height captured beyond the viewport without
    resizing it; `scale` keeps the PNG small."""
    with devtools_tab(width=width, timeout=timeout) as cdp:
        cdp.call("Page.enable")
        cdp.call("Page.navigate", {"url": url(page, fragment)})
        cdp.wait("Page.loadEventFired")
        frames = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
        cdp.call("Runtime.evaluate", {"expression": frames, "awaitPromise": True})
        height = cdp.call("Page.getLayoutMetrics")["cssContentSize"]["height"]
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}
        shot = cdp.call(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": clip},
        )
    return base64.b64decode(shot["data"])


@contextmanager
def _loaded(
    page: Path, fragment: str, size: tuple[int, int], budget_ms: int, timeout: float
) -> Iterator[_Devtools]:
    """A fresh tab of `size` that opened the page and let its scripts run for `budget_ms`
    of virtual time, as `--virtual-time-budget` does: time stands still while files
    load, then runs on with every timer fired at once, until the budget is spent."""
    with devtools_tab(width=size[0], height=size[1], timeout=timeout) as cdp:
        cdp.call("Emulation.setVirtualTimePolicy", {"policy": "pause"})
        cdp.call("Page.navigate", {"url": url(page, fragment)})
        policy = {"policy": "pauseIfNetworkFetchesPending", "budget": budget_ms}
        cdp.call("Emulation.setVirtualTimePolicy", policy)
        cdp.wait("Emulation.virtualTimeBudgetExpired")
        yield cdp


class _Chromium:
    """One headless Chromium (throw-away profile) driven over its DevTools pipe: the
    browser every tab of this test process opens in. Started on first use (starting one
    costs more CPU than most pages it shows), killed after each test module (conftest:
    idle, it still costs ~0.2 CPU-s a minute) or when the process exits, and when it
    stops answering (the next tab starts another)."""

    def __init__(self) -> None:
        binary = require_chromium()
        to_chrome, from_chrome = os.pipe(), os.pipe()

        def pipes() -> None:  # the child reads fd 3 and writes fd 4
            os.dup2(to_chrome[0], 3)
            os.dup2(from_chrome[1], 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.profile = tempfile.mkdtemp(prefix="passhat-chromium-")
        self.proc = subprocess.Popen(
            [
                *(binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self.profile}"),
                "about:blank",  # not the new-tab page it would load and keep drawing
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=pipes,
            close_fds=False,
            start_new_session=True,
        )
        os.close(to_chrome[0])
        os.close(from_chrome[1])
        self.out, self.inp = to_chrome[1], from_chrome[0]
        self.ids = itertools.count(1)
        self.buffer = b""

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # the group is gone already
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        os.close(self.out)
        os.close(self.inp)
        shutil.rmtree(self.profile, ignore_errors=True)


_browser: _Chromium | None = None


def _shared() -> _Chromium:
    """This process's browser, started now if there is none (or it died)."""
    global _browser
    require_chromium()  # each tab asks, as each `chromium` start did
    if _browser is not None and _browser.proc.poll() is not None:
        discard()
    if _browser is None:
        _browser = _Chromium()
    return _browser


@atexit.register
def discard() -> None:
    """Kill this process's browser, if it has one; the next tab starts another."""
    global _browser
    if _browser is not None:
        browser, _browser = _browser, None
        browser.close()


@contextmanager
def devtools_tab(
    *,
    width: int = 1280,
    height: int = 800,
    timeout: float = 120,
    protocol: type[_Devtools] | None = None,
) -> Iterator[_Devtools]:
    """A fresh blank tab of `width` × `height` in a browser context of its own (no
    cookies, storage or cache of another tab) of this process's headless Chromium,
    driven over its DevTools pipe (`protocol`: a `_Devtools` class); closed with its
    context afterwards. A tab that stops answering takes the browser down with it."""
    cdp = (protocol or _Devtools)(_shared(), time.monotonic() + timeout)
    context = None
    try:
        context = cdp.call("Target.createBrowserContext")["browserContextId"]
        made = {"url": "about:blank", "browserContextId": context}
        target = cdp.call("Target.createTarget", made)["targetId"]
        attached = {"targetId": target, "flatten": True}
        cdp.session = cdp.call("Target.attachToTarget", attached)["sessionId"]
        size = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        cdp.call("Emulation.setDeviceMetricsOverride", size)
        yield cdp
    except RuntimeError:  # the pipe did not answer, or Chromium refused: start afresh
        discard()
        raise
    finally:
        if context is not None and _browser is cdp.browser:
            cdp.session, cdp.deadline = None, time.monotonic() + 30
            try:
                cdp.call("Target.disposeBrowserContext", {"browserContextId": context})
            except RuntimeError:
                discard()


class _Devtools:
    """One tab's session on Chromium's DevTools protocol over --remote-debugging-pipe:
    JSON messages ending in a NUL byte, commands answered by id, events by method;
    messages of the browser's other sessions are passed over."""

    def __init__(self, browser: _Chromium, deadline: float) -> None:
        self.browser, self.deadline = browser, deadline
        self.session: str | None = None

    def _send(self, method: str, params: dict[str, Any] | None) -> int:
        number = next(self.browser.ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if self.session is not None:
            message["sessionId"] = self.session
        os.write(self.browser.out, json.dumps(message).encode() + b"\0")
        return number

    def _read(self) -> dict[str, Any]:
        browser = self.browser
        while b"\0" not in browser.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([browser.inp], [], [], left)[0]:
                raise RuntimeError("chromium's DevTools pipe did not answer in time")
            chunk = os.read(browser.inp, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            browser.buffer += chunk
        message, browser.buffer = browser.buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def _next(self) -> dict[str, Any]:
        while True:
            message = self._read()
            if message.get("sessionId") in (None, self.session):
                return message

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        number = self._send(method, params)
        while True:
            message = self._next()
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def wait(self, event: str) -> None:
        while self._next().get("method") != event:
            pass


def png_ink(png: bytes, parts: int = 10) -> list[float]:
    """The share of dark pixels (any channel below 160) in each of `parts` horizontal
    bands of an 8-bit RGB or RGBA PNG, top to bottom."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, data, header = 8, b"", b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        body = png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            data += body
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    if depth != 8 or color not in (2, 6):
        raise ValueError(f"PNG of depth {depth}, color type {color}: not 8-bit RGB(A)")
    bpp = 4 if color == 6 else 3
    raw, stride = zlib.decompress(data), width * bpp
    previous, dark = bytearray(stride), []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = previous[x]
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                c = previous[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        dark.append(sum(1 for x in range(0, stride, bpp) if min(line[x : x + 3]) < 160))
        previous = line
    bands = [dark[height * i // parts : height * (i + 1) // parts] for i in range(parts)]
    return [sum(band) / (len(band) * width) if band else 0.0 for band in bands]


# --------------------------------------------------------------------------- reading a dump

_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "wbr",
}


class Node:
    """An element of a parsed DOM dump: tag, attributes, children, text."""

    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children: list[Node | str] = []

    def iter(self) -> list[Node]:
        """This node and every element below it, in document order."""
        out: list[Node] = [self]
        for child in self.children:
            if isinstance(child, Node):
                out.extend(child.iter())
        return out

    def find_all(self, tag: str | None = None, **attrs: str | bool) -> list[Node]:
        """Elements with this tag (any if None) whose attributes equal `attrs`:
        `data_cell="found"` matches data-cell="found", `data_run=True` any data-run."""
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}

        def match(n: Node) -> bool:
            return all(
                (k in n.attrs) if v is True else n.attrs.get(k) == v for k, v in wanted.items()
            )

        return [n for n in self.iter() if (tag is None or n.tag == tag) and match(n)]

    def with_class(self, tag: str | None, name: str) -> list[Node]:
        """Elements with this tag (any if None) that carry class `name`."""
        return [n for n in self.find_all(tag) if name in n.attrs.get("class", "").split()]

    def find(self, tag: str | None = None, **attrs: str | bool) -> Node:
        found = self.find_all(tag, **attrs)
        if not found:
            raise AssertionError(f"no <{tag or '*'}> with {attrs}")
        return found[0]

    def text(self) -> str:
        """Visible text: scripts and styles left out, whitespace collapsed."""
        parts: list[str] = []
        for child in self.children:
            if isinstance(child, str):
                parts.append(child)
            elif child.tag not in ("script", "style"):
                parts.append(child.text())
        return " ".join(" ".join(parts).split())


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in _VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> Node:
    """A DOM dump (or any HTML) as a tree of `Node`s."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root
