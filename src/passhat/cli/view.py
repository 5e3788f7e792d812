"""`passhat view`: the store as a live, read-only local web app (passhat.view)."""

from __future__ import annotations

from typing import Annotated

import typer

from passhat.cli._app import app, console
from passhat.cli._help import examples
from passhat.cli._options import PriceOption
from passhat.cli._store import DbOption
from passhat.store import default_db_path


@app.command(
    epilog=examples(
        "passhat view",
        "passhat view --db runs/passhat.db --port 8800 --open",
        "passhat view --price in=0.15,out=0.60",
    )
)
def view(
    db: DbOption = None,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. Anything but loopback shows the store to the network "
            "(a warning is printed). Wherever it listens, every request needs the random "
            "access token in the URL it prints: on loopback, other local users and agents run "
            "at --isolation process could otherwise read the store.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", metavar="N", help="Port to listen on (0: any free one).")
    ] = 8765,
    open_browser: Annotated[
        bool,
        typer.Option(
            "--open",
            help="Open the experiments page in a browser (through a file of this user's that "
            "leads there: the token is on no command line).",
        ),
    ] = False,
    price: PriceOption = None,
) -> None:
    """Serve the store as a live, read-only web app: experiments, progress, runs,
    comparisons and trends. Open the URL it prints: its access token (new at each start)
    becomes a cookie the pages use; a request without it is refused."""
    from passhat.usage import parse_price
    from passhat.view import serve

    serve(
        db or default_db_path(),
        host=host,
        port=port,
        open_browser=open_browser,
        prices=parse_price(price) if price is not None else None,
        say=lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True),
    )
