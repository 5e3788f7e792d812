"""What a new user meets in the first hour (issue #17): messages that say what
happened, exits that tell CI the truth, crashes that keep their traceback, no
Python reprs in reports.

Each test names the complaint it guards.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from conftest import SuiteWriter
from passhat.accounting import account
from passhat.records import RunRecord
from passhat.report.html import render_html
from passhat.report.parts import header_rows, recorded_note
from passhat.report.terminal import plan_not_met_line
from passhat.runner import agent_traceback
from test_report_html import errored, experiment, run

# --------------------------------------------------------------------------- plan NOT met


def test_plan_not_met_never_contrasts_a_label_with_itself() -> None:
    """Was: "dataset figures are pass@3 / pass^3, not pass@3 / pass^3" when the only
    shortfall was cases with no counted run at all."""
    left_out = account([("a", 1, "passed"), ("a", 2, "failed"), ("b", 1, "errored")], 2)
    line = plan_not_met_line(left_out)
    assert line == (
        "Plan NOT met: 1 of 2 cases has no counted run and is left out; "
        "the dataset figures cover the other 1."
    )
    assert "pass@2 / pass^2, not pass@2" not in line
    short = account([("a", 1, "passed"), ("a", 2, "failed"), ("b", 1, "passed")], 3)
    assert plan_not_met_line(short) == (
        "Plan NOT met: dataset figures are pass@1 (mean of per-case rates) / pass^1 (mean of "
        "per-case rates), not pass@3 / pass^3."
    )


def test_html_plan_line_is_the_terminal_one() -> None:
    items = ["AC1:conflict"]
    e = experiment(["a", "b"], k=2)
    runs = [run("a", 1, items, items), run("a", 2, items, []), errored("b", 1)]
    page = render_html(e, runs)
    assert "1 of 2 cases has no counted run and is left out" in page
    assert "not pass@2 / pass^2" not in page


# --------------------------------------------------------------------------- exits


def test_run_with_nothing_counted_exits_1_without_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: exit 0 when 0 of 27 runs were counted."""
    db = str(tmp_path / "p.db")
    r = run_seed(capsys, "--agent", "agents_for_tests:crashes", "-k", "1", "--db", db, "-q")
    assert r.code == 1
    assert "no counted run yet" in r.out


def test_strict_turns_any_shortfall_into_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    # two cases: the seed's card is answered by the cassette, the other is not
    args = ("run", str(CLARIFY), "--case", SEED, "--case", "clean-password-reset-en-003")
    r = run_cli(capsys, *args, "-k", "1", "--db", db, "-q")
    assert r.code == 0, r.err  # something was counted: a shortfall alone is not a failure
    r = run_cli(capsys, *args, "-k", "1", "--db", db, "-q", "--strict")
    assert r.code == 1
    assert "1 of 2 cases has no counted run" in r.out


# --------------------------------------------------------------------------- model specs


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gemini:pro", "unknown provider 'gemini'; known: replay, openai, anthropic"),
        ("gpt-4", "is not provider:name"),
        ("openai:", "is not provider:name"),
    ],
)
def test_a_bad_model_spec_says_what_is_wrong(
    spec: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_cli(capsys, "run", str(CLARIFY), "--model", spec, "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and message in r.err
    assert "Traceback" not in r.err


# --------------------------------------------------------------------------- show


@pytest.fixture
def crashed_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    db = str(tmp_path / "p.db")
    run_seed(capsys, "--agent", "agents_for_tests:crashes", "-k", "2", "--db", db, "-q")
    return db


def test_show_names_an_unknown_case_and_run(
    crashed_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: `show latest nosuchcase 1` pointed to missing runs."""
    r = run_cli(capsys, "show", "latest", "nosuchcase", "1", "--db", crashed_db)
    assert r.code == 2
    assert f"has no case 'nosuchcase' (its cases: {SEED})" in r.err
    r = run_cli(capsys, "show", "latest", SEED[:-1], "1", "--db", crashed_db)
    assert f"did you mean '{SEED}'?" in r.err
    r = run_cli(capsys, "show", "latest", SEED, "5", "--db", crashed_db)
    assert r.code == 2 and "asks for runs 1 to 2 of each case; there is no run 5" in r.err


def test_show_prints_the_traceback_and_json(
    crashed_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: an agent crash kept only "KeyError: 'tickett'"."""
    r = run_cli(capsys, "show", "latest", SEED, "1", "--db", crashed_db)
    assert r.code == 0, r.err
    assert "traceback" in r.out
    assert 'raise RuntimeError("the agent fell over")' in r.out
    r = run_cli(capsys, "show", "latest", SEED, "1", "--db", crashed_db, "--json")
    data = json.loads(r.out)
    assert data["status"] == "errored" and data["case_id"] == SEED and data["run_index"] == 1
    assert data["model_source"] is None  # the agent asked no model
    assert data["traceback"].rstrip().endswith("RuntimeError: the agent fell over")
    r = run_cli(capsys, "report", "latest", "--db", crashed_db)
    assert "the agent's traceback: passhat show" in r.out


def test_show_prints_what_the_agent_returned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: `show` printed a run "whole" without its output: a tool-only agent's answer
    (no transcript to carry it) was in `--json` and `diff` alone."""
    db = str(tmp_path / "p.db")
    rooms = str(Path(__file__).parent / "rooms")
    r = run_cli(capsys, "run", rooms, "--seed", "7", "-k", "1", "--db", db, "-q", "--no-report")
    assert r.code == 0, r.err
    r = run_cli(capsys, "show", "latest", "week-1", "1", "--db", db)
    assert r.code == 0, r.err
    tail = r.out[r.out.index("\noutput\n") :]
    assert '"booked": "R3"' in tail and tail.index("output") < tail.index("final state")


def test_html_shows_the_traceback() -> None:
    e = experiment(["a"], k=1)
    crash = RunRecord(
        experiment_id=e.id,
        case_id="a",
        run_index=1,
        case_hash="h-a",
        status="errored",
        error_type="agent_error",
        error_message="KeyError: 'tickett'",
        traceback='  File "agent.py", line 3, in agent\n    input["tickett"]\nKeyError: <b>',
    )
    page = render_html(e, [crash])
    assert '<details class="traceback"><summary>traceback</summary><pre>' in page
    assert "input[&#34;tickett&#34;]" in page and "KeyError: &lt;b&gt;" in page


def test_a_long_traceback_keeps_its_head_and_tail() -> None:
    try:
        raise ValueError("x" * 5000 + " the bottom")
    except ValueError as error:
        text = agent_traceback(error, limit=2000)
    assert 1900 < len(text) <= 2100
    assert text.startswith("Traceback (most recent call last):")
    assert "characters cut" in text
    assert text.rstrip().endswith("xxx the bottom")


def test_the_migration_keeps_old_runs_readable(tmp_path: Path) -> None:
    """A store written before the traceback column still opens; its runs read None."""
    from passhat.store import MIGRATIONS, Store

    db = tmp_path / "old.db"
    with Store(db) as store:
        assert store.migrations()[-1] == MIGRATIONS[-1][0]
        store.create_experiment(experiment(["a"], k=1))
        store.record_run(errored("a", 1))
        got = store.run("3f2a9c1d", "a", 1)
    assert got.traceback is None
    columns = {r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(runs)")}
    assert "traceback" in columns


# --------------------------------------------------------------------------- no reprs


def test_cassette_notes_read_as_words_not_python() -> None:
    """Was: `replayed_from {'model': ...}` and `prompt_version None`."""
    note = recorded_note(
        {
            "model": "gpt-5.4-mini",
            "prompt_version": None,
            "replayed_from": {"model": "gpt-5.4-mini", "prompt_version": "cd590b9ba593"},
        }
    )
    assert note == (
        "model gpt-5.4-mini, replayed from (model gpt-5.4-mini, prompt version cd590b9ba593)"
    )
    assert "{" not in note and "None" not in note and "'" not in note


def test_no_cassette_note_for_an_experiment_that_asked_no_model() -> None:
    """Was: the seed cassette's gpt-5.4-mini note on an experiment with no model call."""
    e = experiment(
        ["a"], k=1, model="replay:seed.jsonl", model_config={"recorded": {"model": "gpt-5.4-mini"}}
    )
    items = ["AC1:conflict"]
    silent = [replace_calls(run("a", 1, items, items), 0)]
    asked = [replace_calls(run("a", 1, items, items), 2)]
    assert dict(header_rows(e, silent))["cassette"] == "not used: no run asked the model"
    assert dict(header_rows(e, asked))["cassette"] == "model gpt-5.4-mini"
    assert "gpt-5.4-mini" not in render_html(e, silent).split("<main>")[1].split("</header>")[0]


def replace_calls(r: RunRecord, calls: int) -> RunRecord:
    from dataclasses import replace

    return replace(r, model_source="replayed" if calls else None, input_tokens=0)


# --------------------------------------------------------------------------- model optional

ASKS_MODEL = """
async def asks(input, env, ctx):
    await ctx.generate([], env.tools)
"""


def test_a_suite_without_a_model_runs_an_agent_that_needs_none(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: a suite had to name a model even for an agent that calls none."""
    assert isinstance(writer.suite, dict)
    del writer.suite["defaults"]["model"]
    suite = str(writer.write())
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "check", suite)
    assert r.code == 0, r.err
    r = run_cli(capsys, "run", suite, "--agent", "agents_for_tests:perfect", "--db", db, "-q")
    assert r.code == 0, r.err
    assert "none (the agent calls no model)" in r.out
    data = json.loads(run_cli(capsys, "report", "latest", "--db", db, "--json").out)
    assert data["experiment"]["model"] == "" and data["accounting"]["runs_counted"] == 3

    # the built-in clarifier always needs one: refused before anything runs
    r = run_cli(capsys, "run", suite, "--db", db, "-q")
    assert r.code == 2
    assert "agent clarifier needs a model; give --model provider:name" in r.err


def test_an_agent_asking_for_a_missing_model_is_errored_with_the_fix(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert isinstance(writer.suite, dict)
    del writer.suite["defaults"]["model"]
    writer.files["asks.py"] = ASKS_MODEL
    suite = str(writer.write())
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", suite, "--agent", "asks.py:asks", "-k", "1", "--db", db, "-q")
    assert r.code == 1
    data = json.loads(run_cli(capsys, "report", "latest", "--db", db, "--json").out)
    [error] = data["errored"]
    assert error["type"] == "model_error"
    assert "the experiment has none; give --model provider:name" in error["message"]


def test_an_agent_that_never_asks_the_model_gets_no_cassette_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: "no answer for 42 of 45 runs ... will end errored" for an agent with no model
    call, then 0 errored; and the seed cassette's note on its report."""
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys,
        "run",
        str(CLARIFY),
        "--agent",
        "agents_for_tests:perfect",
        "-k",
        "1",
        "--db",
        db,
    )
    assert r.code == 0, r.err
    assert "no answer" not in r.err
    assert "cassette        not used: no run asked the model" in r.out
    assert "Reconstructed" not in r.out
    # the clarifier does ask: there the warning stands
    r = run_cli(capsys, "run", str(CLARIFY), "-k", "1", "--db", db, "-q")
    assert "has no answer for 8 of 9 runs" in r.err


# --------------------------------------------------------------------------- --agent file.py


def test_a_file_agent_is_found_beside_the_suite_from_anywhere(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Was: "no file <cwd>/fixed_agent.py; the path is relative to the suite folder"."""
    assert isinstance(writer.suite, dict)
    del writer.suite["defaults"]["model"]
    writer.files["fixed_agent.py"] = "async def fixed_agent(input, env, ctx):\n    return 1\n"
    suite = writer.write()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", str(suite), "--agent", "fixed_agent.py:fixed_agent", "--db", db)
    assert r.code == 0, r.err
    # a file in the current folder works too
    (elsewhere / "mine.py").write_text("async def mine(input, env, ctx):\n    return 2\n")
    r = run_cli(capsys, "run", str(suite), "--agent", "mine.py:mine", "--db", db, "-q")
    assert r.code == 0, r.err
    # neither: both paths tried are named
    r = run_cli(capsys, "run", str(suite), "--agent", "nope.py:agent", "--db", db, "-q")
    assert r.code == 2
    assert f"no file {suite.resolve() / 'nope.py'} nor {elsewhere.resolve() / 'nope.py'}" in r.err
    assert "beside suite.yaml, then in the current folder" in r.err


# --------------------------------------------------------------------------- terminal tables


def test_a_short_case_shows_its_n_and_case_ids_never_break_mid_word() -> None:
    """Was: the header said pass@n and never showed the n of a short case; and
    "ac-conflict-0 / 01" in an 80-column terminal."""
    from passhat.report.terminal import metrics_table

    long_id = "conflict-reminders-009"
    accounting = account(
        [(long_id, i, "passed") for i in (1, 2)] + [("b", i, "failed") for i in (1, 2, 3)],
        3,
    )
    out = _render(metrics_table(accounting), 80)
    assert long_id in out  # whole, on one line
    row = next(line for line in out.splitlines() if long_id in line)
    assert "✓ n=2" in row
    b_row = next(line for line in out.splitlines() if line.startswith("b "))
    assert "n=" not in b_row  # a complete case needs no n


def _render(renderable: object, width: int) -> str:
    import io

    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=width, highlight=False).print(renderable)
    return buffer.getvalue()


# --------------------------------------------------------------------------- list


def test_list_at_80_columns_cuts_nothing_and_shows_counted_and_errored(
    crashed_db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: "lite-moc…", and "runs 2/2" for an experiment whose runs all errored."""
    monkeypatch.setenv("COLUMNS", "80")
    r = run_cli(capsys, "list", "--db", crashed_db)
    assert r.code == 0, r.err
    assert "…" not in r.out
    assert max(len(line) for line in r.out.splitlines()) <= 80
    header = next(line for line in r.out.splitlines() if "counted" in line)
    assert header.split()[-2:] == ["counted", "errored"]
    row = next(line for line in r.out.splitlines() if re.match(r"[0-9a-f]{8} ", line))
    assert row.split()[-2:] == ["0/2", "2"]  # nothing counted, both runs errored
    assert "agents_for_tests:crashes" in r.out
    assert "replay:cassettes/seed.jsonl" in r.out  # a 27-character model, whole


# --------------------------------------------------------------------------- tokens and cost


def test_report_gives_tokens_and_cost_per_run_case_and_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: token usage stored per run, but no totals in report or --json."""
    db = str(tmp_path / "p.db")
    assert run_seed(capsys, "--db", db, "-q").code == 0
    data = json.loads(
        run_cli(capsys, "report", "latest", "--db", db, "--json", "--price", "in=0.15,out=0.60").out
    )
    usage = data["usage"]
    runs = usage["runs"]
    assert len(runs) == 3 and all(r["input_tokens"] > 0 for r in runs)
    total_in = sum(r["input_tokens"] for r in runs)
    total_out = sum(r["output_tokens"] for r in runs)
    assert usage["experiment"]["input_tokens"] == total_in
    assert usage["experiment"]["output_tokens"] == total_out
    assert usage["cases"][0]["case"] == SEED and usage["cases"][0]["runs"] == 3
    cost = (total_in * 0.15 + total_out * 0.60) / 1e6
    assert usage["experiment"]["cost"] == pytest.approx(cost)
    assert usage["experiment"]["cost_per_run"] == pytest.approx(cost / 3)
    assert usage["prices_per_million"] == {"input": 0.15, "output": 0.60}

    text = run_cli(capsys, "report", "latest", "--db", db, "--price", "in=0.15,out=0.60").out
    assert "tokens and cost (completed runs)" in text and f"{total_in:,}" in text
    assert "cost at in=0.15,out=0.6 per million tokens" in text
    text = run_cli(capsys, "report", "latest", "--db", db).out
    assert "give --price in=PRICE,out=PRICE" in text  # no price: tokens, and how to get cost

    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-x: {in: 1, out: 2}\n")
    r = run_cli(capsys, "report", "latest", "--db", db, "--json", "--prices", str(prices))
    assert r.code == 2 and "no price for model 'replay:cassettes/seed.jsonl'" in r.err
    prices.write_text("replay:cassettes/seed.jsonl: {in: 1, out: 2}\n")
    r = run_cli(capsys, "report", "latest", "--db", db, "--json", "--prices", str(prices))
    assert json.loads(r.out)["usage"]["experiment"]["cost"] == pytest.approx(
        (total_in + 2 * total_out) / 1e6
    )


@pytest.mark.parametrize(
    "price", ["in=1", "in=1,out=x", "in=-1,out=1", "out=1,in=1,in=2", "1,2", "in=inf,out=1"]
)
def test_a_bad_price_names_the_fix(price: str) -> None:
    from passhat.errors import InputError
    from passhat.usage import parse_price

    with pytest.raises(InputError, match="--price"):
        parse_price(price)


CASSETTE_ANSWERS = """{{"cassette": 1, "model": "m"}}
{{"case": "tiny-001", "run": 1, "turn": 0, "message": {{"role": "assistant", "content": "a"}}, "usage": {{"input_tokens": {i}, "output_tokens": {o}}}}}
{{"case": "tiny-002", "run": 1, "turn": 0, "message": {{"role": "assistant", "content": "b"}}, "usage": {{"input_tokens": {i}, "output_tokens": {o}}}}}
"""


def test_compare_names_agents_and_puts_cost_beside_quality(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: compare named each side's model but not its agent, and gave no cost."""
    second = json.loads(json.dumps(writer.case))
    second["id"] = "tiny-002"
    writer.cases["tiny2.yaml"] = second
    writer.files["asks.py"] = (
        "async def asks(input, env, ctx):\n"
        "    return (await ctx.generate([], env.tools)).message.content\n"
    )
    writer.files["a.jsonl"] = CASSETTE_ANSWERS.format(i=100, o=10)
    writer.files["b.jsonl"] = CASSETTE_ANSWERS.format(i=200, o=20)
    suite = str(writer.write())
    db = str(tmp_path / "p.db")
    for side in ("a", "b"):
        r = run_cli(
            capsys,
            "run",
            suite,
            "--agent",
            "asks.py:asks",
            "--model",
            f"replay:{side}.jsonl",
            "-k",
            "1",
            "--name",
            f"side-{side}",
            "--db",
            db,
            "-q",
        )
        assert r.code == 0, r.err
    r = run_cli(capsys, "compare", "side-a", "side-b", "--db", db, "--price", "in=1,out=2")
    assert r.code == 0, r.err
    out = " ".join(r.out.split())
    assert "experiment side-a (agent asks.py:asks, model replay:a.jsonl)" in out
    assert "cost per run: A 0.00012, B 0.00024; B − A +0.00012 (+100%)" in out
    r = run_cli(capsys, "compare", "side-a", "side-b", "--db", db)
    assert "tokens per run: A 110, B 220; B − A +110 (+100%)" in " ".join(r.out.split())
    r = run_cli(
        capsys, "compare", "side-a", "side-b", "--db", db, "--json", "--price", "in=1,out=2"
    )
    usage = json.loads(r.out)["usage"]
    assert usage["cost_per_run_difference"] == pytest.approx(0.00012)
    assert usage["tokens_per_run_difference"] == pytest.approx(110)


# --------------------------------------------------------------------------- the HTML page

SEED_NOTE = (
    "Reconstructed from the seed's published description of three runs on ac-conflict-001, "
    "not a live recording: the annotation sets, one update_ticket call per run and no "
    "query_background follow the description; wording and token counts are illustrative."
)


def test_html_has_per_case_intervals_forecasts_and_tokens() -> None:
    """Was: the HTML report lacked the per-case intervals and forecasts the terminal shows."""
    from passhat.report.experiment import experiment_accounting
    from passhat.stats import case_intervals, forecast
    from passhat.usage import Prices
    from test_report_html import Node, parse

    items = ["AC1:conflict"]
    e = experiment(["a", "b"], k=3)
    runs = [run("a", i, items, items) for i in (1, 2, 3)]
    runs += [run("b", 1, items, items), run("b", 2, items, []), run("b", 3, items, [])]
    dom = parse(render_html(e, runs, prices=Prices(1.0, 2.0), forecast_m=5))
    accounting = experiment_accounting(e, runs)
    wilson = {c.case: c for c in case_intervals(accounting)}
    nxt = {c.case: c for c in forecast(accounting, 5).cases}
    table = dom.find("section", id="cases").find("table")
    head = table.find("thead").text()
    assert "rate 95% (Wilson)" in head and "P(next 5 pass)" in head
    for case in ("a", "b"):
        row: Node = table.find("tr", data_case=case)
        ci = row.find("td", class_="ci")
        assert float(ci.attrs["data-low"]) == pytest.approx(wilson[case].low)
        assert float(ci.attrs["data-high"]) == pytest.approx(wilson[case].high)
        fc = row.find("td", class_="forecast")
        assert float(fc.attrs["data-expected"]) == pytest.approx(nxt[case].expected)
    usage = dom.find("section", id="usage")
    # each run: 2100 in, 380 out -> 2,860 per run at in=1, out=2 per million
    total = usage.find("tfoot").text()
    assert "12,600" in total and "2,280" in total
    assert float(usage.find("tfoot").find("td", data_cost=True).attrs["data-cost"]) == (
        pytest.approx(6 * (2100 + 2 * 380) / 1e6)
    )


@pytest.mark.browser
def test_the_cassette_note_spans_the_header(tmp_path: Path) -> None:
    """Was: the cassette note rendered as a tall narrow column."""
    from browser import dump_dom, parse, require_chromium
    from test_report_html import with_script

    require_chromium()
    items = ["AC1:conflict"]
    e = experiment(
        ["a"],
        k=1,
        model="replay:cassettes/seed.jsonl",
        model_config={"recorded": {"model": "gpt-5.4-mini", "note": SEED_NOTE}},
    )
    html = render_html(e, [replace_calls(run("a", 1, items, items), 2)])
    measure = (
        "const dd = document.querySelector('[data-field=cassette] dd');"
        "const meta = document.querySelector('dl.meta');"
        "document.body.dataset.note = dd.getBoundingClientRect().width;"
        "document.body.dataset.meta = meta.getBoundingClientRect().width;"
    )
    path = tmp_path / "note.html"
    path.write_text(with_script(html, measure), encoding="utf-8")
    body = parse(dump_dom(path)).find("body")
    assert float(body.attrs["data-note"]) > 0.7 * float(body.attrs["data-meta"])


def test_check_lists_each_tool_with_its_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: nothing told a user writing an agent what the tools take."""
    from passhat.report.suite import tool_signature

    r = run_cli(capsys, "check", str(CLARIFY))
    assert r.code == 0, r.err
    lines = [" ".join(line.split()) for line in r.out.splitlines()]
    assert "tool get_ticket(key)" in lines
    assert "tool update_ticket(key, goal, scope_in, scope_out, annotations)" in lines
    schema = {"properties": {"a": {}, "b": {}}, "required": ["a"]}
    assert tool_signature("t", schema) == "t(a, [b])"


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_forecast_table_fits_80_columns_with_whole_case_ids(lang: str) -> None:
    """Was: "ac-conflict-0 / 01" in the per-case table of an 80-column terminal."""
    from passhat.report.terminal import case_forecast_table
    from passhat.stats import uncertainty

    accounting = account([(SEED, i, "failed") for i in (1, 2, 3)], 3)
    out = _render(case_forecast_table(uncertainty(accounting), lang=lang), 80)
    assert any(SEED in line for line in out.splitlines())
    assert "63.2%" in out  # the n/n bound, not cropped


def test_compare_plans_in_whole_runs() -> None:
    """Was: "28 cases at 2.67 runs each"."""
    from passhat.report.terminal import verdict_sentence
    from passhat.stats import compare

    runs_a, runs_b = [], []
    for c in range(8):
        for i in range(1, (3 if c % 3 else 2) + 1):  # 2.625 counted runs per case on average
            runs_a.append((f"c{c}", i, "passed" if (c + i) % 2 else "failed"))
            runs_b.append(
                (f"c{c}", i, "passed" if (c + i + 1) % 2 or (c, i) == (0, 1) else "failed")
            )
    result = compare(account(runs_a, 3), account(runs_b, 3))
    assert result.verdict.outcome == "none" and result.verdict.cases_needed
    assert f"about {result.verdict.cases_needed} cases at 3 runs each" in result.verdict.text
    assert verdict_sentence(result, "en") == result.verdict.text  # the terminal says the same
    assert "每個執行 3 次" in verdict_sentence(result, "zh-TW")
