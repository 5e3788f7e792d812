"""Large foreign files read as a stream, twice: once for the runs without their
transcripts (what the accounting, checks, notes and figures need), once more as the
runs are stored, so a 300 MB file never sits in memory. Each run of the second read is
checked against its twin of the first: a file that changed between them is refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from passhat.errors import InputError
from passhat.records import RunRecord

Item = TypeVar("Item")


class NotStreamable(Exception):
    """The stream met what only a whole read words as the source does (NaN or Infinity,
    a number past a double, a damaged file): the file is then read whole."""


def stored_runs(
    path: Path,
    items: Callable[[], Iterator[Item]],
    light: Sequence[RunRecord],
    run: Callable[[int, Item, RunRecord], RunRecord],
) -> Callable[[], Iterator[RunRecord]]:
    """The runs with their transcripts: `run(at, item, light[at])` for each item read again
    from the stream, in the order of `light` (the same runs without transcripts)."""

    def changed() -> InputError:
        return InputError(f"{path}: the file changed while it was imported; import it again")

    def runs() -> Iterator[RunRecord]:
        count = 0
        try:
            for at, item in enumerate(items()):
                if at >= len(light):
                    raise changed()
                full = run(at, item, light[at])
                if replace(full, transcript=[]) != light[at]:
                    raise changed()
                count += 1
                yield full
        except NotStreamable:
            raise changed() from None
        if count != len(light):
            raise changed()

    return runs
