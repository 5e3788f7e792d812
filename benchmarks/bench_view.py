"""Benchmark: `passhat view` over a store of 1,000,000 runs in 50 experiments.

Targets (issue #37), the server a real `passhat view` process on 127.0.0.1:
- the experiments page answers in at most 300 ms;
- the page of an experiment of 100,000 runs (10,000 cases x 10) shows its figures in
  at most 1 s, its first byte within 200 ms;
- the server's memory stays flat while browsing: peak RSS at most 150 MB after every
  page of every experiment was opened (the experiment pages, their case pages, runs,
  a diff, a compare, the trend).

Also printed, without a target: how long the server took to start (it reads every
experiment's figures once before it prints its URL), the first request of each page,
and `report --html`'s page served from the store (/e/ID/report), which is the whole
report of `passhat report --html` and is far from these numbers at 100,000 runs.

`--live` measures instead how soon a run another process records shows on an open page
(target 2 s; tests/test_view_browser.py checks that it shows, not how soon): a small
store served by a real `passhat view`, the experiments page open in headless Chromium,
and `passhat run examples/clarify` recording into the same store, `--repeat` times; from
the moment the store holds the run's first record to the moment the page's row counts it.

The store: `_fixtures.kept_store` (10,000 x 10 real runs, copied), then 49 more
experiments of the same suite copying 1,840 of its cases each (18,400 runs):
1,001,600 runs in all, every row as `passhat run` writes it. `--stores DIR` keeps it
(building it takes minutes and about 5 GB).

    .venv/bin/python benchmarks/bench_view.py [--stores DIR] [--repeat 5]
    .venv/bin/python benchmarks/bench_view.py --live [--repeat 5]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _fixtures import kept_store
from _result import result

from passhat.view.security import token_cookie

EXTRA = 49
EXTRA_CASES = 1_840
ROOT = Path(__file__).resolve().parents[1]
LIVE_TARGET_S = 2.0


def build(folder: Path) -> tuple[Path, str]:
    """The 1,000,000-run store (kept in `folder`), and the 100,000-run experiment's id."""
    big, eid = kept_store(folder, 10_000, 10)
    db = folder / "view-1m.db"
    if db.is_file():
        return db, eid
    partial = folder / "view-1m.partial.db"
    partial.unlink(missing_ok=True)
    con = sqlite3.connect(big)
    con.execute(f"VACUUM INTO '{partial}'")
    con.close()
    con = sqlite3.connect(partial, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    experiment_cols = [r[1] for r in con.execute("PRAGMA table_info(experiments)")]
    run_cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    names = ", ".join(f'"case-{i:05d}"' for i in range(EXTRA_CASES))
    for n in range(1, EXTRA + 1):
        new_id = f"v{n:03d}{eid[4:]}"
        changed = {
            "id": f"'{new_id}'",
            "name": f"'view-{n:03d}'",
            "created_at": f"'2026-06-{1 + n // 2:02d}T{n % 24:02d}:00:00Z'",
            "case_ids": f"'[{names}]'",
            # each copied case's hash, as its own experiment would hold them
            "case_hashes": "(SELECT json_group_object(key, value) FROM json_each(case_hashes) "
            f"WHERE key < 'case-{EXTRA_CASES:05d}')",
        }
        select = ", ".join(changed.get(c, c) for c in experiment_cols)
        con.execute("BEGIN")
        con.execute(
            f"INSERT INTO experiments ({', '.join(experiment_cols)}) "
            f"SELECT {select} FROM experiments WHERE id = ?",
            (eid,),
        )
        runs = ", ".join(f"'{new_id}'" if c == "experiment_id" else c for c in run_cols)
        con.execute(
            f"INSERT INTO runs ({', '.join(run_cols)}) SELECT {runs} FROM runs "
            "WHERE experiment_id = ? AND case_id < ?",
            (eid, f"case-{EXTRA_CASES:05d}"),
        )
        con.execute("COMMIT")
        print(f"  experiment {n}/{EXTRA} copied", flush=True)
    con.close()
    partial.rename(db)
    return db, eid


COOKIES: dict[str, str] = {}
"""The token cookie of the view on each port (as a browser holds it after the printed URL)."""


def start(db: Path) -> tuple[subprocess.Popen[str], str, float]:
    begin = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "passhat", "view", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        if found:
            port, token = found.groups()
            COOKIES[port] = f"{token_cookie(int(port))}={token}"
            return proc, port, time.perf_counter() - begin
    raise SystemExit(f"passhat view did not start (exit {proc.wait()})")


def fetch(port: str, path: str) -> tuple[float, float, int]:
    """(seconds to the first byte, seconds to the last, bytes) of one GET."""
    connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=600)
    begin = time.perf_counter()
    connection.request("GET", path, headers={"Cookie": COOKIES[port]})
    answer = connection.getresponse()
    first = answer.read(1)
    ttfb = time.perf_counter() - begin
    body = first + answer.read()
    total = time.perf_counter() - begin
    connection.close()
    if answer.status != 200:
        raise SystemExit(f"GET {path}: {answer.status} {body[:300]!r}")
    return ttfb, total, len(body)


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of the process, in MB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def timed(port: str, path: str, repeat: int) -> tuple[float, float, float, float]:
    """First request's (ttfb, total), then the medians of `repeat` more."""
    first_ttfb, first_total, size = fetch(port, path)
    again = [fetch(port, path) for _ in range(repeat)]
    ttfb = statistics.median(a[0] for a in again)
    total = statistics.median(a[1] for a in again)
    print(
        f"GET {path}: first {first_total * 1000:.0f} ms (first byte {first_ttfb * 1000:.0f} ms), "
        f"then median {total * 1000:.0f} ms (first byte {ttfb * 1000:.0f} ms) of {repeat}; "
        f"{size:,} bytes"
    )
    return first_ttfb, first_total, ttfb, total


def live(repeat: int) -> bool:
    """Seconds from a concurrent `passhat run`'s first record to the open experiments page
    counting it, `repeat` times (a new experiment each), through the test helpers: the
    store of tests/view_stores.py, the view it serves, tests/devtools.py's Chromium page."""
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import find_chromium
    from devtools import chromium_page
    from passhat.store import Store
    from view_stores import served, trend_store

    if not find_chromium():
        raise SystemExit("chromium: not installed (make test installs it)")
    shown = []
    with tempfile.TemporaryDirectory(prefix="bench-view-live-") as tmp:
        db = trend_store(Path(tmp) / "passhat.db")
        with (
            served(db) as url,
            chromium_page() as page,
            Store(db, create=False, read_only=True) as store,
        ):
            page.goto(url)
            page.wait_for("document.getElementById('stream').dataset.state === 'on'")
            for n in range(repeat):
                name = f"live-{n}"
                row = f"document.querySelector('#experiments tr[data-name=\"{name}\"]')"
                writer = subprocess.Popen(
                    [
                        *(sys.executable, "-m", "passhat", "run", "examples/clarify"),
                        *("--db", str(db), "--name", name, "--concurrency", "1", "-q"),
                    ],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                try:
                    recorded = None
                    deadline = time.monotonic() + 120
                    while recorded is None and time.monotonic() < deadline:
                        counts = store.status_counts()
                        ids = [e.id for e in store.experiments() if e.name == name]
                        if ids and sum(counts.get(ids[0], {}).values()) > 0:
                            recorded = time.monotonic()
                        time.sleep(0.01)
                    if recorded is None:
                        raise SystemExit(f"passhat run recorded no run of {name} in 120 s")
                    page.wait_for(
                        f"{row} && Number({row}.dataset.counted) + "
                        f"Number({row}.dataset.errored) > 0",
                        timeout=120,
                        every=0.01,
                    )
                    shown.append(time.monotonic() - recorded)
                finally:
                    writer.wait(300)
                print(f"  {name}: shown {shown[-1]:.2f} s after its first record", flush=True)
    print(
        f"a concurrent run shown on the open experiments page: median "
        f"{statistics.median(shown):.2f} s, most {max(shown):.2f} s of {repeat} "
        f"(the store polled every 10 ms, the page every 10 ms)"
    )
    return result(
        "view: a run recorded by a concurrent passhat run, shown on the open experiments page",
        max(shown) / LIVE_TARGET_S,
        1,
        f"seconds from its first record to the page's row counting it (the most of {repeat}) "
        f"/ {LIVE_TARGET_S:g} s",
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stores", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--live", action="store_true", help="only how soon a concurrent run shows (Chromium)"
    )
    args = parser.parse_args()
    if args.live:
        return 0 if live(args.repeat) else 1
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
        folder = args.stores or Path(tmp)
        db, eid = build(folder)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        (runs,) = con.execute("SELECT count(*) FROM run_summaries").fetchone()
        (experiments,) = con.execute("SELECT count(*) FROM experiments").fetchone()
        con.close()
        print(
            f"store: {runs:,} runs in {experiments} experiments, {db.stat().st_size / 1e9:.1f} GB"
        )
        proc, port, started = start(db)
        try:
            print(
                f"passhat view started (URL printed) in {started:.2f} s; RSS {rss_mb(proc.pid)[0]:.0f} MB"
            )
            _, _, _, listing = timed(port, "/", args.repeat)
            ok = result(
                f"view: experiments page, {runs:,} runs in {experiments} experiments",
                listing / 0.3,
                1,
                "median seconds / 0.300 s",
            )
            first_ttfb, first_total, ttfb, total = timed(port, f"/e/{eid}", args.repeat)
            ok &= result(
                "view: page of an experiment of 100,000 runs, its figures",
                max(first_total, total) / 1.0,
                1,
                "seconds (first request or median, the larger) / 1 s",
            )
            ok &= result(
                "view: page of an experiment of 100,000 runs, first byte",
                max(first_ttfb, ttfb) / 0.2,
                1,
                "seconds to the first byte (first request or median, the larger) / 0.200 s",
            )
            for path in (
                f"/e/{eid}?page=50",
                f"/e/{eid}?page=100",
                f"/e/{eid}/cases?page=50",
                f"/runs?e={eid}&case=case-00042&a=1",
                f"/runs?e={eid}&case=case-00042&a=1&b=2",
                f"/compare?a=v001{eid[4:]}&b={eid}",
                "/trend",
            ):
                timed(port, path, 1)
            for n in range(1, EXTRA + 1):
                fetch(port, f"/e/v{n:03d}{eid[4:]}")
                fetch(port, f"/e/v{n:03d}{eid[4:]}?page=10")
            now, peak = rss_mb(proc.pid)
            print(f"after browsing every experiment: RSS {now:.0f} MB, peak {peak:.0f} MB")
            ok &= result(
                "view: server's peak memory while browsing (no report page)",
                peak / 150,
                1,
                "peak RSS MB / 150 MB",
            )
            _, seconds, size = fetch(port, f"/e/{eid}/report")
            print(f"GET /e/{eid}/report (no target): {seconds:.2f} s; {size:,} bytes")
            now, peak = rss_mb(proc.pid)
            print(
                f"after the full report page of 100,000 runs (no target): RSS {now:.0f} MB, "
                f"peak {peak:.0f} MB"
            )
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
