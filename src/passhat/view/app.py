"""The view's routes: each page a URL over the store, read-only.

    /                       the experiments (filter, sort; running ones marked live)
    /e/{ref}                one experiment: figures, accounting, live progress, its
                            cases a page at a time (?page=N), links to every run
    /e/{ref}/report         the HTML report of `report --html`, served from the store
    /e/{ref}/cases?page=N   the report of one page of its cases (fast at any size)
    /runs?e=&case=&a=[&b=]  one run (as `passhat show`), or two side by side (as
                            `passhat diff`; &eb= for a run of another experiment)
    /compare?a=&b=          `passhat compare A B` (difference, interval, verdict, MDE)
    /trend?suite=           a suite's experiments over time, regressions flagged
    /events                 Server-Sent Events: `change` whenever the store is written

Everything a run holds is data: Jinja autoescapes it and shows its direction characters
as their escapes (report/html/render.py `shown`; a form's values, sent back, `|verbatim`),
the terminal renderings are shown as text in <pre>, and the pages run only
/static/view.js (see security.py).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from passhat.errors import PasshatError
from passhat.report.parts import money
from passhat.store import Store
from passhat.view.data import (
    CASES_PER_PAGE,
    Snapshot,
    case_page,
    driving_cases,
    previous_of,
    shifts_of,
    trend_of,
)
from passhat.view.security import Guard, is_loopback

if TYPE_CHECKING:
    import jinja2
    from rich.console import Console
    from starlette.requests import Request
    from starlette.responses import Response

    from passhat.records import ExperimentRecord
    from passhat.report.why import Explainer
    from passhat.usage import Prices

POLL_S = 0.25
"""How often the live stream looks at the store's data version (a recorded run shows
within this plus the page's fetch)."""
KEEPALIVE_S = 15.0
"""A comment line this often keeps an idle stream open through proxies."""
TEXT_WIDTH = 140
"""Columns of the terminal renderings (show, diff, compare) shown as text."""


@cache
def environment() -> jinja2.Environment:
    from passhat.report.html.render import templates

    env = templates("passhat.view")
    env.globals["q"] = lambda **params: (
        "?" + urlencode({k: v for k, v in params.items() if v is not None})
    )
    env.filters["pct"] = lambda value: f"{value * 100:.1f}%"
    env.filters["money"] = money
    env.filters["signed"] = lambda value: f"{value * 100:+.1f} pts"
    return env


def as_text(draw: Callable[[Console], None]) -> str:
    """What a terminal rendering prints, as plain text (no colour, control characters
    escaped), for a <pre>."""
    from passhat.report.console import SafeConsole, escape_controls, keep_dropped_visible

    keep_dropped_visible()
    console = SafeConsole(
        file=io.StringIO(), width=TEXT_WIDTH, color_system=None, record=True, soft_wrap=False
    )
    draw(console)
    # the recorded segments are rich's, not what SafeConsole writes: escaped here
    return escape_controls(console.export_text(styles=False))


class View:
    """The pages over one store file."""

    def __init__(self, db: Path, prices: Prices | None = None) -> None:
        self.db = db
        self.snapshot = Snapshot(self.open(), prices)

    def open(self) -> Store:
        return Store(self.db, create=False, read_only=True)

    def page(self, name: str, status: int = 200, **context: Any) -> Response:
        from starlette.responses import HTMLResponse

        html = environment().get_template(name).render(db=str(self.db), **context)
        return HTMLResponse(html, status_code=status)

    def problem(self, error: PasshatError, status: int = 404) -> Response:
        return self.page("problem.html.j2", status, title="not found", message=str(error))

    # --------------------------------------------------------------- pages

    def experiments(self, request: Request) -> Response:
        return self.page(
            "experiments.html.j2", summaries=self.snapshot.summaries(), title="experiments"
        )

    def experiments_rows(self, request: Request) -> Response:
        return self.page("_experiment_rows.html.j2", summaries=self.snapshot.summaries())

    def _live(self, ref: str) -> dict[str, Any]:
        experiment = self.snapshot.find(ref)
        summary = self.snapshot.summary(experiment)
        a = summary.accounting
        remaining = a.runs_requested - a.runs_completed
        return {
            "s": summary,
            "eta": self.snapshot.eta(experiment.id, remaining) if summary.live else None,
            "remaining": remaining,
        }

    def experiment(self, request: Request) -> Response:
        try:
            live = self._live(request.path_params["ref"])
        except PasshatError as error:
            return self.problem(error)
        e = live["s"].experiment
        number = _page_number(request)
        previous = previous_of(self.snapshot.experiments(), e)
        return self.page(
            "experiment.html.j2",
            title=e.name or e.id,
            e=e,
            page=case_page(live["s"].accounting, number),
            previous=previous,
            **live,
        )

    def experiment_live(self, request: Request) -> Response:
        try:
            live = self._live(request.path_params["ref"])
        except PasshatError as error:
            return self.problem(error)
        return self.page("_live.html.j2", **live)

    def report(self, request: Request) -> Response:
        from passhat.report.experiment import experiment_accounting
        from passhat.report.html import render_html

        try:
            with self.open() as store:
                e = store.experiment(request.path_params["ref"])
                runs = store.summaries(e.id, decode_items=False)
                html = render_html(
                    e,
                    runs,
                    load=lambda cases: store.runs_json(e.id, cases),
                    why=_explainer(store, e, len(runs)),
                    accounting=experiment_accounting(e, runs),
                )
        except PasshatError as error:
            return self.problem(error)
        return _report_response(html)

    def cases_report(self, request: Request) -> Response:
        """The report's page (grid, curves, item stability, tool use, why, transcripts)
        of one page of an experiment's cases: the report of an experiment of 100,000
        runs is seconds to make whole, a page of it a fraction."""
        from passhat.report.html import render_html

        try:
            e = self.snapshot.find(request.path_params["ref"])
            number = _page_number(request)
            page = case_page(self.snapshot.summary(e).accounting, number)
            cases = [c.case for c in page.cases]
            kept = set(cases)
            part = replace(
                e,
                case_ids=tuple(cases),
                case_k={c: k for c, k in e.case_k.items() if c in kept},
            )
            with self.open() as store:  # light runs; the detail as stored, not decoded
                light = store.runs(e.id, full=False, cases=cases)
                html = render_html(
                    part,
                    light,
                    load=lambda some: store.runs_json(e.id, some),
                    why=_explainer(store, part, len(light)),
                )
        except PasshatError as error:
            return self.problem(error)
        first = (page.number - 1) * CASES_PER_PAGE + 1
        note = (
            environment()
            .get_template("_part_note.html.j2")
            .render(e=e, page=page, first=first, last=first + len(cases) - 1, total=len(e.case_ids))
        )
        return _report_response(html.replace("<body>", "<body>\n" + note, 1))

    def runs(self, request: Request) -> Response:
        from passhat.divergence import diff_runs
        from passhat.report.diff import print_diff
        from passhat.report.run import print_run

        p = request.query_params
        try:
            index_a = int(p.get("a", "1"))
            index_b = int(p["b"]) if p.get("b") else None
        except ValueError:
            return self.page(
                "problem.html.j2",
                400,
                title="bad request",
                message="a and b are run indices (1, 2, ...)",
            )
        case = p.get("case", "")
        try:
            with self.open() as store:
                ea = store.experiment(p.get("e", "latest"))
                eb = store.experiment(p["eb"]) if p.get("eb") else ea
                a = store.run(ea.id, case, index_a)
                b = store.run(eb.id, case, index_b) if index_b is not None else None
        except PasshatError as error:
            return self.problem(error)
        if b is None:
            text = as_text(lambda console: print_run(console, a))
            title = f"{case} run {index_a}"
        else:
            same = ea.id == eb.id
            name_a = f"run {a.run_index}" if same else f"{ea.name or ea.id} run {a.run_index}"
            name_b = f"run {b.run_index}" if same else f"{eb.name or eb.id} run {b.run_index}"
            if name_a == name_b:
                name_b += " (again)"
            d = diff_runs(a, b)
            text = as_text(lambda console: print_diff(console, d, name_a, name_b))
            title = f"{case}: {name_a} and {name_b}"
        return self.page("runs.html.j2", title=title, e=ea, eb=eb, case=case, a=a, b=b, text=text)

    def compare(self, request: Request) -> Response:
        from passhat.report.terminal import print_comparison

        p = request.query_params
        experiments = self.snapshot.experiments()
        context: dict[str, Any] = {
            "experiments": experiments[::-1],
            "c": None,
            "text": None,
            "error": None,
            "shifts": {},
            "driving": [],
        }
        if p.get("a") and p.get("b"):
            try:
                a, b = self.snapshot.find(p["a"]), self.snapshot.find(p["b"])
                c = self.snapshot.compared(a, b, allow_different=p.get("allow") == "1")
                with self.open() as store:
                    context["shifts"] = shifts_of(store, c)
                context["driving"] = driving_cases(c.result)
            except PasshatError as error:
                context["error"] = str(error)
            else:
                context["c"] = c
                context["text"] = as_text(
                    lambda console: print_comparison(
                        console,
                        c.result,
                        source_a=c.data["a"]["source"],
                        source_b=c.data["b"]["source"],
                    )
                )
        return self.page("compare.html.j2", title="compare", a=p.get("a"), b=p.get("b"), **context)

    def trend(self, request: Request) -> Response:
        from passhat.view.plot import trend_plot

        suites = sorted({e.suite_name for e in self.snapshot.experiments()})
        suite = request.query_params.get("suite") or (suites[0] if suites else "")
        points = trend_of(self.snapshot, suite)
        return self.page(
            "trend.html.j2",
            title=f"trend · {suite}",
            suite=suite,
            suites=suites,
            points=points,
            plot=trend_plot(points),
        )

    # --------------------------------------------------------------- live

    async def events(self, request: Request) -> Response:
        from starlette.responses import StreamingResponse

        return StreamingResponse(
            self._changes(request),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    async def _changes(self, request: Request) -> AsyncIterator[str]:
        """`change` with the store's data version each time it moves; a comment now
        and then. Its own connection: the pages' lock never delays it."""
        from starlette.concurrency import run_in_threadpool

        store = await run_in_threadpool(self.open)
        try:
            last = await run_in_threadpool(store.data_version)
            yield f"retry: 1000\nevent: hello\ndata: {last}\n\n"
            quiet = 0.0
            while not await request.is_disconnected():
                await asyncio.sleep(POLL_S)
                version = await run_in_threadpool(store.data_version)
                if version != last:
                    last, quiet = version, 0.0
                    yield f"event: change\ndata: {version}\n\n"
                else:
                    quiet += POLL_S
                    if quiet >= KEEPALIVE_S:
                        quiet = 0.0
                        yield ": still here\n\n"
        finally:
            store.close()


def _explainer(store: Store, experiment: ExperimentRecord, runs: int) -> Explainer | None:
    """Why runs differ, as `report --html` shows it by default (at most 20,000 runs)."""
    from passhat.report.why import Explainer, explain_by_default

    if not explain_by_default(runs):
        return None
    return Explainer(experiment, lambda case: store.runs(experiment.id, cases=[case]))


def _page_number(request: Request) -> int:
    try:
        return int(request.query_params.get("page", "1"))
    except ValueError:
        return 1


def _report_response(html: str) -> Response:
    """A page of the HTML report, under the report's own policy: its one script, by
    hash, and nothing else."""
    from starlette.responses import HTMLResponse

    from passhat.report.html.render import _script

    csp = (
        f"default-src 'none'; script-src {_script()[1]}; style-src 'unsafe-inline'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return HTMLResponse(html, headers={"content-security-policy": csp})


def no_icon(request: Request) -> Response:
    """No icon (a browser asks for one on every page; a 404 would be a console error)."""
    from starlette.responses import Response

    return Response(status_code=204)


def create_app(
    db: Path,
    *,
    token: str | None,
    host: str = "127.0.0.1",
    port: int | None = None,
    prices: Prices | None = None,
) -> Guard:
    """The view as an ASGI application over the store at `db` (opened read-only); with
    `token`, every request must carry it (no default: None, an open view, must be asked
    for; `serve` always gives one); `prices` adds cost to the tokens."""
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    view = View(db, prices)
    view.snapshot.summaries()  # every experiment's figures read once, before the first page
    routes = [
        Route("/", view.experiments),
        Route("/fragment/experiments", view.experiments_rows),
        Route("/e/{ref}", view.experiment),
        Route("/e/{ref}/live", view.experiment_live),
        Route("/e/{ref}/report", view.report),
        Route("/e/{ref}/cases", view.cases_report),
        Route("/runs", view.runs),
        Route("/compare", view.compare),
        Route("/trend", view.trend),
        Route("/events", view.events),
        Route("/favicon.ico", no_icon),
        Mount("/static", StaticFiles(packages=[("passhat.view", "static")]), name="static"),
    ]
    return Guard(Starlette(routes=routes), token=token, loopback=is_loopback(host), port=port)


__all__ = ["View", "as_text", "create_app"]
