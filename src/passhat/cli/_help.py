"""Help pages that read like git's, pytest's or uv's.

Typer's own pages label values with Python types (`<bool>`, `<list[str]>`) and
write required arguments in braces (`{SUITE}`). Here every value is a metavar in
capitals (`-k, --k K`, `--case CASE`), a flag shows none, arguments appear in the
usage line as they are typed (`passhat show EXPERIMENT CASE RUN`), paragraphs are
wrapped to the terminal, and each command ends with examples, kept line by line.

`Typer` is `typer.Typer` whose commands use `Command` unless told otherwise, so a
command added anywhere in `passhat.cli` gets this help without asking for it.
"""

from __future__ import annotations

import copy
import inspect
from typing import TYPE_CHECKING, Any, get_args

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup
from typer.models import OptionInfo

from passhat.cli._coerce import plain_coercion

if TYPE_CHECKING:
    from collections.abc import Callable

    from typer._click import Command as ClickCommand
    from typer._click import Context, HelpFormatter, Parameter

    _Base = ClickCommand
else:
    _Base = object

HELP_OPTIONS = ["-h", "--help"]


def examples(*lines: str) -> str:
    """An epilog of example command lines: `Examples:` then one line each, as written."""
    return "Examples:\n" + "\n".join(lines)


def metavar(param: Parameter) -> str:
    """The metavar a value is shown with: given, or the parameter's name in capitals."""
    given = getattr(param, "metavar", None)
    return given if given else (param.name or "VALUE").upper()


def first_sentence(text: str) -> str:
    """The first sentence of a help text, on one line."""
    flat = " ".join(inspect.cleandoc(text).split("\n\n")[0].split())
    head, dot, _ = flat.partition(". ")
    return head + "." if dot else flat


def _is_flag(param: Parameter) -> bool:
    return bool(getattr(param, "is_flag", False) or getattr(param, "count", False))


def _option_names(param: Parameter) -> str:
    """`-k, --k K`: short names first, then long ones; the metavar once, at the end."""
    names = sorted([*param.opts, *param.secondary_opts], key=lambda n: (n.startswith("--"), n))
    shown = ", ".join(names)
    return shown if _is_flag(param) else f"{shown} {metavar(param)}"


def _option_help(param: Parameter, ctx: Context) -> str:
    record = param.get_help_record(ctx)
    text = record[1] if record else ""
    if getattr(param, "multiple", False) and "repeat" not in text:
        text += " (repeatable)"
    return text


def _usage_piece(param: Parameter) -> str:
    piece = metavar(param)
    if param.nargs != 1:
        piece += "..."
    return piece if param.required else f"[{piece}]"


def format_params(
    command: typer.core.TyperCommand | TyperGroup, ctx: Context, formatter: HelpFormatter
) -> None:
    """The Arguments section, then the options: under their panels (typer's
    `rich_help_panel`, in the order the panels first appear), those of no panel
    last under Options; one column width for all, so the panels line up."""
    params = command.get_params(ctx)
    arguments = [(_usage_piece(p), p.help or "") for p in params if isinstance(p, TyperArgument)]
    panels: dict[str, list[tuple[str, str]]] = {}
    for p in params:
        if not isinstance(p, TyperArgument) and not getattr(p, "hidden", False):
            panel = getattr(p, "rich_help_panel", None) or "Options"
            panels.setdefault(panel, []).append((_option_names(p), _option_help(p, ctx)))
    if arguments:
        with formatter.section("Arguments"):
            formatter.write_dl(arguments)
    if "Options" in panels:
        panels["Options"] = panels.pop("Options")  # last
    width = min(max((len(n) for rows in panels.values() for n, _ in rows), default=0), 30)
    for panel, rows in panels.items():
        with formatter.section(panel):
            formatter.write_dl([(names.ljust(width), text) for names, text in rows])


def panel_option(panel: str, *names: str, **settings: Any) -> Any:
    """A typer option shown under `panel` in its command's help (typer's
    rich_help_panel): `run -h` groups its many options so."""
    return typer.Option(*names, rich_help_panel=panel, **settings)


def in_panel(option: object, panel: str) -> OptionInfo:
    """The typer option of `option`, an `Annotated[type, typer.Option(...)]` that several
    commands share, shown under `panel` in one command's help (the others keep it
    under Options): `db: Annotated[Path | None, in_panel(DbOption, STORE)] = None`."""
    info = next(m for m in get_args(option)[1:] if isinstance(m, OptionInfo))
    moved = copy.copy(info)
    moved.rich_help_panel = panel
    return moved


def format_examples(epilog: str | None, formatter: HelpFormatter) -> None:
    """The epilog line by line: example command lines must never be rewrapped."""
    if not epilog:
        return
    formatter.write_paragraph()
    for line in inspect.cleandoc(epilog).splitlines():
        indent = 0 if line.endswith(":") else formatter.current_indent + 2
        formatter.write(" " * indent + line + "\n")


def usage_pieces(command: TyperCommand | TyperGroup, ctx: Context) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    pieces += [_usage_piece(p) for p in command.get_params(ctx) if isinstance(p, TyperArgument)]
    return pieces


class _PlainOptions(_Base):
    """Plain option values converted without pydantic (see _coerce.py), the help
    option's included: mixed into `Command` and `Group`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_coercion(self.params)

    def get_help_option(self, ctx: Context) -> Any:
        option = super().get_help_option(ctx)
        plain_coercion([option] if option is not None else [])
        return option


class Command(_PlainOptions, TyperCommand):
    """A passhat command: capital metavars, examples kept line by line; plain option
    values converted without pydantic."""

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return usage_pieces(self, ctx)

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        format_params(self, ctx, formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        format_examples(self.epilog, formatter)


WORKFLOW = ("check", "run", "resume", "report", "show", "list", "compare", "cassette", "metrics")
"""The order a new user meets the commands in; any other command follows, by name."""


def rank_commands(names: list[str]) -> list[str]:
    """The workflow's commands in its order, then the others by name."""

    def rank(name: str) -> tuple[int, str]:
        return (WORKFLOW.index(name) if name in WORKFLOW else len(WORKFLOW), name)

    return sorted(names, key=rank)


class Group(_PlainOptions, TyperGroup):
    """The `passhat` command itself: the same style, then its commands."""

    def list_commands(self, ctx: Context) -> list[str]:
        return rank_commands(super().list_commands(ctx))

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return [*usage_pieces(self, ctx), self.subcommand_metavar]

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        format_params(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def summary(self, ctx: Context, name: str) -> str | None:
        """The first sentence of a command's help; None for a hidden command."""
        command = self.get_command(ctx, name)
        if command is None or command.hidden:
            return None
        return first_sentence(command.help or "")

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Each command with the first sentence of its help, whole (wrapped, not cut)."""
        rows = []
        for name in self.list_commands(ctx):
            summary = self.summary(ctx, name)
            if summary is not None:
                rows.append((name, summary))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        format_examples(self.epilog, formatter)


class Typer(typer.Typer):
    """`typer.Typer` whose commands are `Command`s unless another class is asked for, and
    whose click command is built once for the commands registered so far."""

    _built: tuple[tuple[int, int], ClickCommand] | None = None

    def command(  # type: ignore[override]
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return super().command(name, cls=cls or Command, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the command line. typer builds the click command again at every call,
        reading each command's signature and evaluating its annotations: 60 % of an
        in-process `passhat audit` (7 of 12 ms CPU), thousands of times in the tests.
        It is built again only when a command module registered more commands. typer's
        own call also sets its exception hook, which with pretty exceptions off (as
        passhat's app has them) prints what Python's prints: with them on, typer's call."""
        if self.pretty_exceptions_enable:
            return super().__call__(*args, **kwargs)
        key = (len(self.registered_commands), len(self.registered_groups))
        if self._built is None or self._built[0] != key:
            self._built = (key, typer.main.get_command(self))
        return self._built[1](*args, **kwargs)


__all__ = [
    "Command",
    "Group",
    "Typer",
    "examples",
    "in_panel",
    "metavar",
    "rank_commands",
]
