"""Plain option values without a pydantic model per parameter.

typer (0.2x) turns each value a command receives into its declared type through
a pydantic `TypeAdapter` it builds on the parameter's first use: importing
pydantic and building the nine adapters of `passhat report` was about a sixth of
that command's time. passhat's options are plain (str, int, float, Path), so a
value in the usual form (a string, digits, a decimal, a path) is converted here,
to exactly the value typer would give; anything else (an exponent, `1_000`, an
empty or unnormalised path, a bad value and its error message) goes to typer's
own coercion, built then. A typer without this machinery is left as it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from typer._click import Context, Parameter

try:
    from typer._coercion import RuntimeParam, build_runtime_param, resolve_type_descriptor
    from typer._param_types import coerce_cli_path
except ImportError:  # pragma: no cover - a typer that converts values without pydantic
    PLAIN = False
else:
    PLAIN = True

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")
_NOT_PLAIN = object()


def plain_value(annotation: Any, value: Any) -> Any:
    """`value` as `annotation` when its form is plain, else `_NOT_PLAIN`. (str and
    float are final classes; `bool` is an `int` but never a plain int here.)"""
    kind = type(value)
    if annotation == list[str]:  # a repeatable option (--case, --require): its strings
        if kind in (tuple, list) and all(type(v) is str for v in value):
            return list(value)
        return _NOT_PLAIN
    if annotation is bool:  # typer converts no bool itself: this only defers the rest
        return value if kind is bool else _NOT_PLAIN
    if annotation is str:
        return value if kind is str else _NOT_PLAIN
    if annotation is int:
        if kind is int or (kind is str and _INT.fullmatch(value)):
            return int(value)
        return _NOT_PLAIN
    if annotation is float:
        if kind is float or kind is int or (kind is str and _FLOAT.fullmatch(value)):
            return float(value)
        return _NOT_PLAIN
    if annotation is Path and kind is str and value and str(Path(value)) == value:
        return Path(value)
    return _NOT_PLAIN


if PLAIN:

    class _Plain(RuntimeParam):
        """typer's coercion of one parameter, with plain values converted directly (a
        plain subclass: no dataclass to build at start-up, `passhat --help` included)."""

        def _coerce_value(self, value: Any, param: Any, ctx: Context) -> Any:
            converted = plain_value(self.annotation, value)
            if converted is _NOT_PLAIN:
                descriptor = resolve_type_descriptor(self.annotation, self.parameter_info)
                full = build_runtime_param(descriptor)
                return full._coerce_value(value, param=param, ctx=ctx)
            if isinstance(converted, Path):  # typer's checks: readable, exists...
                info = self.parameter_info
                return coerce_cli_path(converted, info, path_type=Path, param=param, ctx=ctx)
            return converted


def _is_plain(param: Parameter) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or not hasattr(param, "_runtime_param"):
        return False
    info = descriptor.parameter_info
    repeated = descriptor.annotation == list[str] and param.multiple
    return (
        (descriptor.annotation in (bool, str, int, float, Path) or repeated)
        and param.nargs == 1
        and (repeated or not param.multiple)
        and descriptor.file_annotation is None
        and info.parser is None
        and getattr(info, "click_type", None) is None
        and info.path_type is None
        and not info.allow_dash
        and not descriptor.is_ranged
        and not descriptor.is_choice
    )


def plain_coercion(params: Iterable[Parameter]) -> None:
    """Give each plain parameter of a command the direct conversion above."""
    if not PLAIN:
        return
    for param in params:
        if _is_plain(param) and getattr(param, "_runtime_param", None) is None:
            descriptor = param.type_descriptor  # type: ignore[attr-defined]
            try:
                plain = _Plain(
                    parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
                )
            except TypeError:  # pragma: no cover - a typer whose RuntimeParam takes other
                return  # arguments (a private class): its own coercion is left in place
            param._runtime_param = plain  # type: ignore[attr-defined]
