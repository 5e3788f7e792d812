"""Running the view: bind, say where it is, serve until interrupted."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import webbrowser
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

from passhat.errors import ConfigError, InputError
from passhat.usage import Prices
from passhat.view.beacon import announced, opening_page
from passhat.view.security import is_loopback, new_token

DEFAULT_HOST = "127.0.0.1"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); one clear line if not."""
    if not 0 <= port <= 65535:  # else bind's OverflowError, a traceback
        raise InputError(f"--port {port}: no such port; give 0 to 65535 (0: any free one)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # no Nagle: http.py
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except socket.gaierror as error:  # the host, not the port
        sock.close()
        raise InputError(
            f"--host {host}: no such address ({error.strerror}); give an IP address such "
            f"as {DEFAULT_HOST} or a name this machine resolves"
        ) from None
    except OSError as error:
        sock.close()
        raise InputError(
            f"--host {host} --port {port}: cannot listen there ({error.strerror}); "
            "pick another --port (0: any free one)"
        ) from None
    sock.listen(128)
    return sock


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """SIGTERM (`kill`, a service manager's stop) ends the view through its `finally`s, as
    Ctrl-C does: uvicorn stops on it, then sends it to itself again, and its default
    action ended the process before the beacon and its token were removed."""
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGTERM) is None  # set outside Python: it could not be put back
    ):
        yield  # signals are the main thread's alone
        return
    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def view_url(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(
    db: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = 8765,
    open_browser: bool = False,
    prices: Prices | None = None,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the view of the store at `db` until interrupted. A random token guards every
    request, on loopback too (other local users and agents run at `--isolation process`
    reach it); beyond loopback a warning says the store is shown to the network."""
    try:
        import uvicorn
    except ImportError:
        raise ConfigError(
            'passhat view needs starlette and uvicorn: pip install "passhat[view]"'
        ) from None
    from passhat.store import Store
    from passhat.view.app import create_app

    Store(db, create=False, read_only=True).close()  # no store: one line, before binding
    token = new_token()
    sock = bind(host, port)
    port = sock.getsockname()[1]
    try:  # the experiments' figures are read here: the URL printed is ready to answer
        app = create_app(db, token=token, host=host, port=port, prices=prices)
    except BaseException:
        sock.close()
        raise
    url = view_url(host, port, token)
    if not is_loopback(host):
        say(
            f"warning: --host {host} shows this store to every machine that can reach it; "
            "each request needs the access token in this URL"
        )
    say(f"passhat view of {db}: {url}  (Ctrl-C stops it)")
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    with sock, announced(db, url), _terminated_as_exit():
        if open_browser:
            webbrowser.open(opening_page(db, url))
        uvicorn.Server(config).run(sockets=[sock])


__all__ = ["DEFAULT_HOST", "bind", "serve", "view_url"]
