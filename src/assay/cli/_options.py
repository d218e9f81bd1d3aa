"""Click options generated from a benchmark's typed ``Options`` model (``assay.exec.BenchmarkOptions``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel

from assay.exec import OptionSpec, option_specs

__all__ = ["click_options"]


def _type(spec: OptionSpec) -> Any:
    lo, hi, lo_open, hi_open = spec.bounds
    if spec.choices is not None:
        return click.Choice(list(spec.choices))
    if spec.kind is Path:
        if spec.flag.path == "dir":
            return click.Path(path_type=Path, file_okay=False)
        return click.Path(path_type=Path)
    if spec.kind is int and (lo is not None or hi is not None):
        return click.IntRange(min=lo, max=hi, min_open=lo_open, max_open=hi_open)  # type: ignore[arg-type]
    if spec.kind is float and (lo is not None or hi is not None):
        return click.FloatRange(min=lo, max=hi, min_open=lo_open, max_open=hi_open)
    return spec.kind


def click_option(spec: OptionSpec) -> click.Option:
    f = spec.flag
    kw: dict[str, Any] = {
        "default": spec.default,
        "help": f.help,
        "envvar": f.envvar,
        "show_default": f.show_default,
        "hidden": f.hidden,
    }
    if f.metavar is not None:
        kw["metavar"] = f.metavar
    if spec.is_flag:
        if not any("/" in d for d in f.decls):
            kw["is_flag"] = True
    else:
        kw["type"] = _type(spec)
    if spec.multiple:
        kw["multiple"] = True
        kw["default"] = tuple(spec.default or ())
    return click.Option([*f.decls, spec.name], **kw)


def click_options(model: type[BaseModel]) -> list[click.Option]:
    """One click option per flagged field of ``model``, named after the field."""
    return [click_option(spec) for spec in option_specs(model)]
