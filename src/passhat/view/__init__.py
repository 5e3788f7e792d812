"""`passhat view`: the store as a live, read-only local web app.

Pages for the experiments, one experiment (with its progress live while `passhat run`
writes it), its runs (as `show` and `diff`), a comparison (as `compare`) and a suite's
trend. The store is opened read-only (SQLite `mode=ro`); no endpoint writes; every
request needs the token in the printed URL, on loopback too. Needs Starlette and
uvicorn (the `view` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.view.app import create_app
    from passhat.view.server import serve

__all__ = ["create_app", "serve"]


def __getattr__(name: str) -> Any:
    """The app's modules load on use: `passhat run` imports `passhat.view.beacon` alone."""
    if name == "create_app":
        from passhat.view.app import create_app

        return create_app
    if name == "serve":
        from passhat.view.server import serve

        return serve
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
