"""`passhat view` over HTTP (a real server on 127.0.0.1) and its pure parts: read-only,
local, a token on every request (on loopback and beyond), the pages' headers, the live stream, and the pieces the
pages are made of. The pages in a browser: test_view_browser.py."""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import uvicorn

from cli_helpers import run_cli, run_seed
from passhat.accounting import account
from passhat.analysis import ItemStability
from passhat.store import Store
from passhat.usage import parse_price, usage_of
from passhat.view import create_app, serve
from passhat.view.beacon import announced, beacon_path, opening_page, view_of
from passhat.view.data import (
    CASES_PER_PAGE,
    Snapshot,
    case_page,
    driving_cases,
    eta_seconds,
    item_shifts,
)
from passhat.view.security import PAGE_CSP, host_allowed, is_loopback, token_cookie
from view_stores import served, suite_experiment, trend_store, write_store

# --------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    ("samples", "remaining", "eta"),
    [
        pytest.param([], 5, None, id="nothing-seen"),
        pytest.param([(0.0, 0)], 5, None, id="one-look"),
        pytest.param([(0.0, 4), (10.0, 4)], 5, None, id="no-progress"),
        pytest.param([(0.0, 0), (10.0, 5)], 5, 10.0, id="half-way"),
        pytest.param([(0.0, 0), (4.0, 2), (10.0, 10)], 20, 20.0, id="over-the-window"),
        pytest.param([(0.0, 0), (10.0, 5)], 0, 0.0, id="done"),
    ],
)
def test_eta_is_the_remaining_runs_at_the_pace_seen(
    samples: list[tuple[float, int]], remaining: int, eta: float | None
) -> None:
    assert eta_seconds(samples, remaining) == eta


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("127.0.0.1:8765", True),
        ("127.0.0.1", True),
        ("localhost:8765", True),
        ("[::1]:8765", True),
        ("127.0.0.1:9999", False),  # another port: another server's page
        ("evil.example:8765", False),  # DNS rebinding: a name that resolves to 127.0.0.1
        ("127.0.0.1.evil.example", False),
        ("", False),
    ],
)
def test_only_a_loopback_host_header_with_our_port_is_answered(header: str, allowed: bool) -> None:
    assert host_allowed(header, 8765) is allowed


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        *[("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.0.0.2", True)],
        *[("0.0.0.0", False), ("192.168.1.5", False), ("::", False), ("example.com", False)],
    ],
)
def test_loopback_is_what_stays_on_this_machine(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_cases_are_listed_a_page_at_a_time() -> None:
    cases = [f"c{i:03d}" for i in range(CASES_PER_PAGE * 2 + 5)]
    accounting = account([(c, 1, "passed") for c in cases], 1, cases)
    first, last = case_page(accounting, 1), case_page(accounting, 3)
    assert (first.number, first.pages) == (1, 3)
    assert [c.case for c in first.cases] == cases[:CASES_PER_PAGE]
    assert [c.case for c in last.cases] == cases[CASES_PER_PAGE * 2 :]
    assert case_page(accounting, 99).number == 3 and case_page(accounting, -1).number == 1


def stability(case: str, item: str, expected: bool, hits: int, runs: int = 4) -> ItemStability:
    return ItemStability(
        case, "exact_set x", item, expected, tuple(range(1, runs + 1)), tuple(range(1, hits + 1))
    )


def test_items_gained_and_lost_are_the_shares_that_moved() -> None:
    a = [
        stability("c1", "AC1", True, 4),
        stability("c1", "AC2", True, 1),
        stability("c1", "AC3", True, 2),
        stability("c1", "AC9", False, 2),  # an extra A made, B never
        stability("c2", "AC1", True, 4),  # a case B never judged
    ]
    b = [
        stability("c1", "AC1", True, 2),
        stability("c1", "AC2", True, 3),
        stability("c1", "AC3", True, 2),  # unchanged: not listed
        stability("c1", "AC8", False, 1),  # an extra only B made
    ]
    shifts = {(x.item, x.gained, x.share_a, x.share_b) for x in item_shifts(a, b)["c1"]}
    assert shifts == {
        ("AC1", False, 1.0, 0.5),
        ("AC2", True, 0.25, 0.75),
        ("AC8", False, 0.0, 0.25),
        ("AC9", True, 0.5, 0.0),
    }
    assert "c2" not in item_shifts(a, b)


def test_the_driving_cases_are_the_smallest_p_values_first(tmp_path: Path) -> None:
    db = trend_store(tmp_path / "passhat.db")
    with Store(db, create=False, read_only=True) as store:
        snapshot = Snapshot(store)
        c = snapshot.compared(store.experiment("p2"), store.experiment("p3")).result
    ranked = driving_cases(c, limit=5)
    p = {x.case: x.p_value for x in c.cases}
    assert len(ranked) == 5
    assert [p[case] for case in ranked] == sorted(p.values())[:5]


# --------------------------------------------------------------------------- over HTTP


def with_token(url: str, headers: dict[str, str]) -> dict[str, str]:
    """`headers`, with the cookie a browser would send after opening `url` (the printed
    URL, which carries the view's token), unless they name a cookie of their own."""
    parts = urlsplit(url)
    token = parse_qs(parts.query).get("token")
    if token and "Cookie" not in headers:
        return {**headers, "Cookie": f"{token_cookie(parts.port)}={token[0]}"}
    return headers


def get(
    url: str, path: str = "", *, method: str = "GET", **headers: str
) -> tuple[int, dict[str, str], str]:
    """One request to the view at `url` (its token, if it has one, sent as the cookie)."""
    parts = urlsplit(url)
    headers = with_token(url, headers)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        target = path if path.startswith("/") else "/" + path
        connection.request(method, target, headers=headers)
        answer = connection.getresponse()
        body = answer.read().decode("utf-8")
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body
    finally:
        connection.close()


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    db = trend_store(tmp_path_factory.mktemp("view") / "passhat.db")
    with served(db) as url:
        yield db, url


PAGES = [
    "/",
    "/e/p3",
    "/e/p3?page=2",
    "/e/p3/live",
    "/runs?e=p3&case=case-00&a=1",
    "/runs?e=p3&case=case-00&a=1&b=2",
    "/compare?a=p2&b=p3",
    "/compare",
    "/trend?suite=coupon",
    "/trend",
    "/fragment/experiments",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_answers_with_the_strict_policy(store_url: tuple[Path, str], path: str) -> None:
    status, headers, body = get(store_url[1], path)
    assert status == 200, body
    assert headers["content-security-policy"] == PAGE_CSP
    assert "'unsafe-inline'" not in PAGE_CSP and "script-src 'self'" in PAGE_CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert "<script>" not in body  # the one script is a file: /static/view.js


def test_the_report_page_keeps_its_own_policy(store_url: tuple[Path, str]) -> None:
    from passhat.report.html.render import _script

    status, headers, body = get(store_url[1], "/e/p3/report")
    assert status == 200
    policy = headers["content-security-policy"]
    assert f"script-src {_script()[1]}" in policy and "'self'" not in policy
    assert "p3" in body and 'data-case="case-29"' in body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_nothing_writes(store_url: tuple[Path, str], method: str) -> None:
    db, url = store_url
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    status, _, body = get(url, "/e/p3", method=method)
    assert status == 405 and "read-only" in body
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_foreign_host_header_is_refused(store_url: tuple[Path, str]) -> None:
    status, _, body = get(store_url[1], "/", Host="evil.example")
    assert status == 421 and "evil.example" in body


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/e/nope", 404, "no experiment 'nope'"),
        ("/runs?e=p3&case=case-00&a=9", 404, "no run 9 of case 'case-00'"),
        ("/runs?e=p3&case=case-00&a=x", 400, "run indices"),
        ("/compare?a=p2&b=nope", 200, "no experiment 'nope'"),
    ],
)
def test_a_bad_address_says_what_is_wrong(
    store_url: tuple[Path, str], path: str, status: int, words: str
) -> None:
    code, _, body = get(store_url[1], path)
    assert code == status
    assert words in body.replace("&#39;", "'")


def test_the_experiment_page_lists_its_cases_a_page_at_a_time(tmp_path: Path) -> None:
    e, runs = suite_experiment(1, [1] * (CASES_PER_PAGE + 3), k=1)
    db = write_store(tmp_path / "passhat.db", [(e, runs)])
    with served(db) as url:
        first = get(url, "/e/p1")[2]
        second = get(url, "/e/p1?page=2")[2]
    assert 'data-case="case-00"' in first and 'data-case="case-100"' not in first
    assert 'data-case="case-102"' in second and 'data-case="case-00"' not in second
    assert 'rel="next"' in first and 'rel="prev"' in second
    with served(db) as url:
        status, headers, part = get(url, "/e/p1/cases?page=2")
    assert status == 200 and "script-src 'sha256-" in headers["content-security-policy"]
    assert 'id="part-note"' in part and "Cases 101–103 of 103" in part
    shown = set(re.findall(r'data-case="(case-\d+)"', part))
    assert shown == {"case-100", "case-101", "case-102"}


def test_the_stream_says_change_when_another_process_writes(tmp_path: Path) -> None:
    e, runs = suite_experiment(1, [3, 0], k=3)
    db = write_store(tmp_path / "passhat.db", [(e, runs[:2])])
    with served(db) as url:
        parts = urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
        connection.request("GET", "/events", headers=with_token(url, {}))
        stream = connection.getresponse()
        assert stream.getheader("content-type", "").startswith("text/event-stream")
        assert b"event: hello" in stream.readline() + stream.readline()
        with Store(db, create=False) as writer:
            writer.record_runs(runs[2:3])
        lines = [stream.readline() for _ in range(4)]
        connection.close()
        assert b"event: change\n" in lines
        live = get(url, "/e/p1/live")[2]
    assert 'data-completed="3"' in live


# --------------------------------------------------------------------------- the token


def test_on_loopback_too_every_request_needs_the_token(tmp_path: Path) -> None:
    """Another local user, or an agent run at `--isolation process`, reaches 127.0.0.1:
    the store is 0600, and its view must not be open to them (tests/test_attack49_view.py)."""
    db = trend_store(tmp_path / "passhat.db")
    with served(db) as printed:
        parts = urlsplit(printed)
        (token,) = parse_qs(parts.query)["token"]
        bare = f"http://{parts.netloc}/"
        assert len(token) >= 40 and parts.hostname == "127.0.0.1"
        for path in ("/", "/e/p3", "/e/p3/report", "/static/view.js", "/events", "/runs"):
            status, _, body = get(bare, path)
            assert status == 403, path
            assert body == "passhat view needs its access token: open the URL it printed\n"
        assert get(bare, "/?token=wrong")[0] == 403
        status, headers, _ = get(bare, "/?" + urlencode({"token": token}))
        assert status == 200
        cookie = headers["set-cookie"]
        assert cookie.startswith(f"{token_cookie(parts.port)}={token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert get(bare, "/e/p3", Cookie=cookie.split(";")[0])[0] == 200  # links, the stream
        # a browser sends 127.0.0.1's cookies to every port: another view's is not ours
        assert get(bare, "/e/p3", Cookie=f"passhat_view_token={token}")[0] == 403
        assert get(bare, "/", Host="evil.example", Cookie=cookie.split(";")[0])[0] == 421


# --------------------------------------------------------------------------- beyond loopback


@contextmanager
def app_on_loopback(app: Any) -> Iterator[str]:
    """`app` served by uvicorn in a thread on 127.0.0.1 (any free port)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_beyond_loopback_every_request_needs_the_token(tmp_path: Path) -> None:
    db = trend_store(tmp_path / "passhat.db")
    token = "s3cret-token-of-the-view"
    with pytest.raises(TypeError, match="token"):
        create_app(db, host="0.0.0.0")  # type: ignore[call-arg]  # an open view is asked for
    app = create_app(db, token=token, host="0.0.0.0")
    with app_on_loopback(app) as url:
        for path in ("/", "/e/p3", "/static/view.js", "/events", "/e/p3/report"):
            status, _, body = get(url, path, Host="192.0.2.7:8765")
            assert status == 403 and "access token" in body, path
        assert get(url, "/?" + urlencode({"token": "wrong"}))[0] == 403
        status, headers, _ = get(url, "/?" + urlencode({"token": token}), Host="192.0.2.7")
        assert status == 200
        cookie = headers["set-cookie"].split(";")[0]
        assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
        assert get(url, "/e/p3", Cookie=cookie)[0] == 200  # the page's links and its stream
        assert get(url, "/e/p3", Cookie="passhat_view_token=wrong")[0] == 403


def test_serving_beyond_loopback_warns_and_prints_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = trend_store(tmp_path / "passhat.db")
    bound: list[str] = []

    def bind(host: str, port: int) -> socket.socket:  # on loopback, whatever was asked
        bound.append(host)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        return sock

    monkeypatch.setattr("passhat.view.server.bind", bind)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    lines: list[str] = []
    serve(db, host="0.0.0.0", port=8765, say=lines.append)
    assert bound == ["0.0.0.0"]
    assert lines[0].startswith("warning: --host 0.0.0.0 shows this store")
    token = lines[1].split("?token=")[1].split()[0]
    assert len(token) >= 40
    lines.clear()
    serve(db, say=lines.append)  # on loopback: no warning, and a token all the same
    assert len(lines) == 1 and "http://127.0.0.1:" in lines[0]
    assert len(lines[0].split("?token=")[1].split()[0]) >= 40


def test_no_store_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "view", "--db", str(tmp_path / "none.db"))
    assert result.code == 2
    assert "no passhat store here" in result.err and "Traceback" not in result.err


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = write_store(tmp_path / "passhat.db", [])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run_cli(capsys, "view", "--db", str(db), "--port", str(port))
    assert result.code == 2
    assert f"--port {port}: cannot listen there" in result.err


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_port_that_cannot_be_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    """Was: `--port 99999` ended in bind's OverflowError traceback."""
    db = write_store(tmp_path / "passhat.db", [])
    result = run_cli(capsys, "view", "--db", str(db), "--port", port)
    assert result.code == 2, result.err
    assert f"--port {port}: no such port; give 0 to 65535 (0: any free one)" in result.err


def test_a_host_that_does_not_resolve_is_named_not_the_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: a host no resolver knows said "pick another --port". (The resolver's answer
    is played here: a real look-up could leave the machine.)"""

    class Unresolved(socket.socket):
        def bind(self, address: Any) -> None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    db = write_store(tmp_path / "passhat.db", [])
    monkeypatch.setattr(socket, "socket", Unresolved)
    result = run_cli(capsys, "view", "--db", str(db), "--host", "nowhere.invalid")
    assert result.code == 2, result.err
    assert "--host nowhere.invalid: no such address (Name or service not known); give an IP" in (
        result.err
    )
    assert "--port" not in result.err


# --------------------------------------------------------------------------- where to watch


def test_a_running_view_is_found_by_its_store_and_forgotten_when_it_stops(tmp_path: Path) -> None:
    db = write_store(tmp_path / "passhat.db", [])
    assert view_of(db) is None
    with announced(db, "http://127.0.0.1:8765/") as path:
        assert view_of(db) == "http://127.0.0.1:8765/"
        assert view_of(tmp_path / "other.db") is None
        assert path.stat().st_mode & 0o077 == 0  # the token may be in it: this user's only
    assert not path.exists() and view_of(db) is None


def test_the_beacon_of_a_dead_view_is_ignored(tmp_path: Path) -> None:
    db = write_store(tmp_path / "passhat.db", [])
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    with announced(db, "http://127.0.0.1:8765/") as path:
        path.write_text(json.dumps({"url": "http://127.0.0.1:8765/", "pid": int(dead.stdout)}))
        assert view_of(db) is None


def test_passhat_run_says_where_to_watch_when_a_view_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "passhat.db"
    assert "watch it live" not in run_seed(capsys, "--db", str(db), "-k", "1").err
    with announced(db, "http://127.0.0.1:8765/?token=abc"):
        result = run_seed(capsys, "--db", str(db), "-k", "1", "--name", "watched")
    with Store(db, create=False, read_only=True) as store:
        eid = store.experiment("watched").id
    assert f"watch it live: http://127.0.0.1:8765/e/{eid}?token=abc" in result.err


def test_serve_announces_itself_while_it_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_store(tmp_path / "passhat.db", [])
    seen: list[str | None] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: seen.append(view_of(db)))
    lines: list[str] = []
    serve(db, port=0, say=lines.append)
    assert seen[0] is not None and seen[0] in lines[0]
    assert "?token=" in seen[0]  # `passhat run`'s link opens it
    assert view_of(db) is None


def test_open_hands_the_browser_a_page_of_its_own_not_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A browser's command line is readable by every local user (/proc/PID/cmdline):
    `--open` gives it a file of this user's alone that leads to the printed URL."""
    db = write_store(tmp_path / "passhat.db", [])
    opened: list[str] = []
    seen: list[tuple[str, int]] = []
    monkeypatch.setattr("webbrowser.open", opened.append)

    def run(self: uvicorn.Server, sockets: object = None) -> None:
        page = Path(urlsplit(opened[0]).path)
        if page.is_file():
            seen.append((page.read_text(encoding="utf-8"), page.stat().st_mode & 0o777))

    monkeypatch.setattr(uvicorn.Server, "run", run)
    lines: list[str] = []
    serve(db, port=0, open_browser=True, say=lines.append)
    printed = lines[0].split()[-4]
    assert "?token=" in printed and "token" not in opened[0], opened
    ((text, mode),) = seen
    assert mode == 0o600 and f'content="0;url={printed}"' in text.replace("&amp;", "&")
    assert not Path(urlsplit(opened[0]).path).exists()  # removed when the view stopped


def test_a_view_stopped_by_sigterm_leaves_no_beacon(tmp_path: Path) -> None:
    """`kill` (or a service manager's stop) sends SIGTERM; uvicorn shuts down and sends
    it again to itself, whose default action ended the process before the beacon (its
    URL and token) and the page `--open` leaves were removed."""
    db = write_store(tmp_path / "passhat.db", [])
    with served(db) as url:  # stopped by SIGTERM to its process group
        deadline = time.monotonic() + 30  # the URL is printed just before the beacon is made
        while view_of(db) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert view_of(db) == url
        beacon = beacon_path(db)
        opening_page(db, url)  # as `--open` leaves it, in the same folder
        assert beacon.exists() and beacon.with_suffix(".html").exists()
    assert not beacon.exists(), "the beacon of a stopped view was left behind"
    assert not beacon.with_suffix(".html").exists()


def test_a_price_adds_the_cost_to_the_tokens(tmp_path: Path) -> None:
    db = trend_store(tmp_path / "passhat.db")
    with Store(db, create=False, read_only=True) as store:
        cost = usage_of(store.tokens(store.experiment("p3").id), parse_price("in=1,out=2")).cost
    with served(db, "--price", "in=1,out=2") as url:
        priced = get(url, "/e/p3/live")[2]
    with served(db) as url:
        unpriced = get(url, "/e/p3/live")[2]
    assert cost is not None and cost > 0
    assert f'data-cost="{cost}"' in priced
    assert "data-cost" not in unpriced


def test_a_sigterm_handler_set_outside_python_is_left_in_place(tmp_path: Path) -> None:
    """review49: the view took SIGTERM over and put back what `signal.signal` had
    returned; for a handler set outside Python (an embedding program's, in C) that is
    None, and putting None back raised TypeError as the view ended. Such a handler is
    left in place now, as a round leaves it (evaluation/running.py)."""
    import subprocess
    import sys

    code = (
        "import ctypes, signal\n"
        "libc = ctypes.CDLL(None)\n"
        "libc.signal.restype = ctypes.c_void_p\n"
        "libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]\n"
        "libc.signal(signal.SIGTERM, ctypes.cast(libc.srand, ctypes.c_void_p).value)\n"
        # read again, as a program embedding Python after setting its handler has it
        "import sys\n"
        "del sys.modules['_signal']\n"
        "import _signal\n"
        "assert signal.getsignal(signal.SIGTERM) is None\n"
        "from passhat.view.server import _terminated_as_exit\n"
        "with _terminated_as_exit():\n"
        "    pass\n"
        "print(signal.getsignal(signal.SIGTERM))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert (done.returncode, done.stdout.strip()) == (0, "None"), done.stderr
