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
