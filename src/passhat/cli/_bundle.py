"""Options several commands take, declared once as the fields of a frozen dataclass
(a bundle: `Shared` of `run` and `resume`, `Importing` of every `passhat import`).

`with_bundles` puts each bundle's fields in a command's signature where the
parameter annotated with the bundle stands (typer reads the signature, so the help
lists them there), and hands them back to the command as one value of the bundle."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

__all__ = ["with_bundles"]


def with_bundles(command: Callable[..., None]) -> Callable[..., None]:
    """`command` with the fields of each bundle parameter (one annotated with a
    dataclass) in its signature in place of that parameter; called, it gets each
    bundle back as one value."""
    named = inspect.Parameter.KEYWORD_ONLY  # typer passes every value by name
    own = inspect.signature(command, eval_str=True).parameters.values()
    bundles: dict[str, tuple[Callable[..., Any], list[inspect.Parameter]]] = {}
    params: list[inspect.Parameter] = []
    for p in own:
        bundle = p.annotation
        if not (isinstance(bundle, type) and dataclasses.is_dataclass(bundle)):
            params.append(p.replace(kind=named))
            continue
        hints = typing.get_type_hints(bundle, include_extras=True)
        fields = [
            inspect.Parameter(f.name, named, annotation=hints[f.name], default=_default(f))
            for f in dataclasses.fields(bundle)
        ]
        bundles[p.name] = (bundle, fields)
        params += fields

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        # every field taken out before any bundle is put in: a bundle parameter may share
        # its name with a field (run's `model: ModelSettings` has a field `model`)
        made = {
            name: make(**{f.name: kwargs.pop(f.name) for f in fields})
            for name, (make, fields) in bundles.items()
        }
        command(**kwargs, **made)

    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return wrapper


def _default(field: dataclasses.Field[Any]) -> Any:
    """A field's default as a parameter's: none (a required option) where it has none."""
    if field.default is dataclasses.MISSING:
        return inspect.Parameter.empty
    return field.default
