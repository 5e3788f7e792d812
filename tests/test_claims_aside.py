"""Set-aside rules of the claim reader (claims/aside.py, aside_cues.py, framing.py,
frames.py, and the notes rule of attached.py) added in issue 34's tenth round (claims47a):
each rule's own-run wording stays a claim beside the wording it sets aside, and each new
pattern reads a hostile input of its own shape to the end (no time assertion: the suite
must simply finish)."""

from __future__ import annotations

from passhat.sources.claims import read_text


def _claimed(text: str, name: str) -> list[int]:
    return [c.k for c in read_text(text, name).claims]


def _aside(text: str, name: str) -> list[str]:
    return [s.rule for s in read_text(text, name).set_aside]


def test_own_runs_following_the_paper_in_notes_are_claims_its_readers_notes_are_not() -> None:
    """A passive own-run claim in a `notes/` file whose sentence names the paper only as the
    method followed was set aside as notes on another work; the authors' runs stay so."""
    own = "We read the paper closely.\n\nFollowing the paper, each task was run 10 times.\n"
    assert _claimed(own, "notes/setup.md") == [10]
    theirs = "Following the paper's protocol, each task was run 10 times by the authors.\n"
    assert _claimed(theirs, "notes/reading.md") == []
    assert _claimed("The paper's setup: each task was run 10 times.\n", "notes/ideas.md") == []


def test_a_hostile_sentence_naming_the_paper_followed_is_read_to_its_end() -> None:
    text = "Following the paper's " + "set-up " * 40_000 + "each task was run 3 times.\n"
    read_text(text, "notes/setup.md")
    text = "As in the paper" + "'s" * 40_000 + " protocol, each task was run 3 times.\n"
    read_text(text, "notes/setup.md")


def test_hostile_inputs_of_the_tenth_rounds_sentence_rules_are_read_to_their_end() -> None:
    """A placeholder never closed, a product never equated, a label, a limit and a condition
    stretched over 40,000 words: each pattern reads them to the end."""
    hostile = [
        ("run.sh", "python eval.py --num-trials 5 " + "<a_b-c " * 40_000),
        ("run.sh", "python eval.py --num-trials 5 " + "<" * 40_000),
        ("summary.test.ts", "// 1 pair × " + "× 1 " * 40_000 + "5 trials = 5 rows"),
        ("README.md", "Mitigation: " + "Mitigation: " * 40_000 + "3 runs per task."),
        ("README.md", "Il limite " + "attuale " * 40_000 + "è di cinque esecuzioni."),
        ("README.md", "For example, " * 40_000 + "if flaky, each task is run 5 times."),
        ("README.md", "第" * 40_000 + "三次实验"),
    ]
    for name, text in hostile:
        read_text(text + "\n", name)


def test_a_hostile_option_help_continued_over_many_lines_is_read_to_its_end() -> None:
    """An option whose call never closes, then 20,000 string lines: each line is framed once."""
    text = 'parser.add_argument("--seeds", help=(\n' + '    "mean across 3 seeds"\n' * 20_000
    read_text(text, "report.py")


def test_hostile_inputs_of_the_checks_and_training_rules_are_read_to_their_end() -> None:
    """Test commands, advantages, difficulty filters and a checks lead-in stretched over
    40,000 words: each pattern reads them to the end."""
    hostile = [
        ("README.md", "make test" + "-x" * 40_000 + " ran 3 times."),
        ("README.md", "We sampled 4 responses to compute the " + "x " * 40_000 + "advantage."),
        ("README.md", "We sampled 4 responses, filtering out the " + "very " * 40_000 + "easy."),
        ("README.md", "The validator " + "checks " * 40_000 + ":\n\n- 5 runs per task"),
        ("README.md", "Checks" + ":" * 40_000 + "\n\n- 5 runs per task"),
    ]
    for name, text in hostile:
        read_text(text + "\n", name)


def test_hostile_inputs_of_the_signature_simulation_threshold_and_dictionary_rules() -> None:
    """An unclosed parameter list, an unclosed simulation call, a threshold, a published
    work and a dictionary header stretched over 40,000 words: each read to its end."""
    hostile = [
        ("sim.py", "def f(" + "a=1, " * 40_000 + "repetitions=10"),
        ("sim.py", "x = simulate(" + "a, " * 40_000 + "repetitions=10"),
        ("README.md", "Alarm, " + "sobald " * 40_000 + "über drei Läufe unter 0,4 fällt."),
        ("README.md", "fällt " + "x " * 40_000 + "unter 3 runs per task."),
        ("README.md", "Published results " + "x " * 40_000 + "(5 seeds each)."),
        ("README.md", "| Column | " + "x | " * 40_000 + "Description |\n|---|---|\n| a | 5 runs |"),
    ]
    for name, text in hostile:
        read_text(text + "\n", name)


def test_a_hostile_sentence_naming_a_sensor_is_read_to_its_end() -> None:
    read_text("// " + "센서 " * 40_000 + "5회 측정하여 평균\n", "read.c")
    read_text("Ping " + "ping " * 40_000 + "mean over 3 runs.\n", "README.md")
