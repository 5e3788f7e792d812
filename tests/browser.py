"""Headless Chromium for the HTML report's tests and benchmark.

Debian's `chromium` package (`make test` installs it). The browser runs with no
sandbox, no GPU, no network chatter and a throw-away profile; `--dump-dom`
prints the DOM after the page's scripts ran (virtual time lets them finish),
`--screenshot` writes a PNG.

When Chromium is missing, tests that need it fail with a message saying how to
get it; set PASSHAT_SKIP_BROWSER=1 to skip them instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

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
    """Run Chromium in its own process group (killed whole on timeout); return stdout."""
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


def dump_dom(page: Path, fragment: str = "", *, budget_ms: int = 5000, timeout: float = 120) -> str:
    """The page's DOM after its scripts ran, as HTML."""
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
    """A PNG of the page in test-artifacts/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    out.unlink(missing_ok=True)
    _run(
        [
            f"--virtual-time-budget={budget_ms}",
            f"--screenshot={out}",
            f"--window-size={size[0]},{size[1]}",
            url(page, fragment),
        ],
        timeout,
    )
    if not out.is_file():
        raise RuntimeError(f"chromium wrote no screenshot to {out}")
    return out


def load_seconds(page: Path, *, budget_ms: int = 1000, timeout: float = 300) -> float:
    """Wall time for Chromium to start, load the page, run its scripts and dump the DOM."""
    start = time.perf_counter()
    dump_dom(page, budget_ms=budget_ms, timeout=timeout)
    return time.perf_counter() - start


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
