"""The public surface of `passhat` is small and deliberate."""

from __future__ import annotations

import passhat


def test_all_is_exactly_the_public_names() -> None:
    public = {n for n in vars(passhat) if not n.startswith("_")} - {"annotations"}
    modules = {name for name in public if type(getattr(passhat, name)).__name__ == "module"}
    assert set(passhat.__all__) - {"__version__"} == public - modules
