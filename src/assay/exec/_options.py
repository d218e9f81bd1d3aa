"""A benchmark's typed options: a pydantic model whose fields carry their command-line spelling.

Each benchmark declares ``Options`` (a :class:`BenchmarkOptions` subclass) in ``evals/<name>/_options.py``::

    class MemoryOptions(BenchmarkOptions):
        scenarios_dir: Annotated[Path | None, Flag("--scenarios", help="Directory of scenario YAMLs.")] = None

The field's name is the option's name (``self.options.scenarios_dir``), its type and default are the option's,
pydantic constraints (``Field(ge=1)``) become click ranges, a ``Literal`` a choice, a ``bool`` a flag, a
``tuple[str, ...]`` a repeatable option. ``assay.cli`` builds the click options from it; the benchmark gets a
validated instance; ``meta.json`` records its JSON dump and ``--resume`` validates that again; ``assay ci
verify`` reads a job's arguments with :func:`parse_args`. Nothing here imports click.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.errors import ConfigError

__all__ = [
    "BenchmarkOptions",
    "Flag",
    "OptionSpec",
    "option_specs",
    "options_error",
    "parse_args",
    "validate_options",
]


@dataclass(frozen=True)
class Flag:
    """How a field is spelled on the command line (``Annotated[T, Flag("--x", "-x", help=...)]``).

    ``decls`` are the spellings, as click takes them (``"--fence/--no-fence"`` for an on/off pair). ``path``
    says what a ``Path`` field accepts (``"dir"``: a folder or nothing yet, never a file).
    """

    decls: tuple[str, ...]
    help: str | None = None
    envvar: str | None = None
    show_default: bool = False
    metavar: str | None = None
    hidden: bool = False
    path: Literal["any", "dir"] = "any"

    def __init__(
        self,
        *decls: str,
        help: str | None = None,
        envvar: str | None = None,
        show_default: bool = False,
        metavar: str | None = None,
        hidden: bool = False,
        path: Literal["any", "dir"] = "any",
    ) -> None:
        given = {"decls": decls, "help": help, "envvar": envvar, "show_default": show_default}
        given |= {"metavar": metavar, "hidden": hidden, "path": path}
        for key, value in given.items():
            object.__setattr__(self, key, value)  # frozen: set once, here


class BenchmarkOptions(BaseModel):
    """The base of every benchmark's ``Options``: no options. Unknown names are ignored (a run recorded by an
    older version, with an option since removed, still resumes)."""

    model_config = ConfigDict(extra="ignore")


@dataclass(frozen=True)
class OptionSpec:
    """One option as the command line sees it, read from a field."""

    name: str
    flag: Flag
    #: the value's type: str, int, float, bool or Path (a choice's values are in ``choices``)
    kind: type
    default: Any
    choices: tuple[str, ...] | None = None
    multiple: bool = False
    #: bounds from the field's constraints: (min, max, min_open, max_open)
    bounds: tuple[float | None, float | None, bool, bool] = (None, None, False, False)

    @property
    def is_flag(self) -> bool:
        return self.kind is bool

    def spellings(self) -> Iterator[tuple[str, bool | None]]:
        """Each command-line spelling, with the value it sets for a flag (None: it takes a value)."""
        for decl in self.flag.decls:
            on, _, off = decl.partition("/")
            yield on, (True if self.is_flag else None)
            if off:
                yield off, False


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The annotation without ``None`` (and whether a sequence of it was asked for)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return _unwrap(rest[0])
    if origin in (tuple, list):
        return get_args(annotation)[0], True
    return annotation, False


def _bounds(metadata: Sequence[Any]) -> tuple[float | None, float | None, bool, bool]:
    lo = hi = None
    lo_open = hi_open = False
    for m in metadata:
        for attr, is_lo, is_open in (
            ("ge", True, False),
            ("gt", True, True),
            ("le", False, False),
            ("lt", False, True),
        ):
            value = getattr(m, attr, None)
            if value is None:
                continue
            if is_lo:
                lo, lo_open = value, is_open
            else:
                hi, hi_open = value, is_open
    return lo, hi, lo_open, hi_open


def option_specs(model: type[BaseModel]) -> list[OptionSpec]:
    """The command-line options of ``model``'s fields that carry a :class:`Flag`, in field order."""
    specs: list[OptionSpec] = []
    for name, info in model.model_fields.items():
        flag = next((m for m in info.metadata if isinstance(m, Flag)), None)
        if flag is None:
            continue
        inner, multiple = _unwrap(info.annotation)
        choices = None
        if get_origin(inner) is Literal:
            choices, inner = tuple(str(c) for c in get_args(inner)), str
        kind = inner if inner in (str, int, float, bool, Path) else str
        default = info.get_default(call_default_factory=True)
        specs.append(OptionSpec(name, flag, kind, default, choices, multiple, _bounds(info.metadata)))
    return specs


def options_error(exc: ValidationError, model: type[BaseModel], where: str = "") -> ConfigError:
    """A ConfigError naming each wrong option by its flag (``--max-turns: ...``), on one line."""
    flags = {s.name: s.flag.decls[0].partition("/")[0] for s in option_specs(model)}
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        name = flags.get(str(err["loc"][0]), loc) if err["loc"] else loc
        if err["type"] == "extra_forbidden":
            parts.append(f"{name}: no such option of this benchmark")
        else:
            parts.append(f"{name} {err.get('input')!r}: {err['msg']}")
    return ConfigError(f"{where}{'; '.join(parts)}")


def parse_args(model: type[BaseModel], argv: Sequence[str]) -> tuple[dict[str, Any], dict[str, str | None]]:
    """Read ``argv`` (a CI job's ``assay eval`` arguments) against ``model``.

    Returns (the values the arguments give ``model``'s options, validated, by field name; every other option
    given, by its spelling, with the token after it when that is not an option itself). A value the model
    refuses is a ConfigError naming the flag.
    """
    by_spelling = {s: (spec, value) for spec in option_specs(model) for s, value in spec.spellings()}
    given: dict[str, Any] = {}
    other: dict[str, str | None] = {}
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-"):
            continue
        spelling, eq, inline = token.partition("=")
        if spelling not in by_spelling:
            value: str | None = inline if eq else None
            if not eq and i < len(tokens) and not tokens[i].startswith("-"):
                value, i = tokens[i], i + 1
            other[spelling] = value
            continue
        spec, flag_value = by_spelling[spelling]
        if flag_value is not None:
            given[spec.name] = flag_value
            continue
        if not eq:
            if i >= len(tokens):
                raise ConfigError(f"{spelling}: needs a value")
            inline, i = tokens[i], i + 1
        given[spec.name] = [*given.get(spec.name, []), inline] if spec.multiple else inline
    try:
        checked = model.model_validate(given)
    except ValidationError as exc:
        raise options_error(exc, model) from None
    return {k: getattr(checked, k) for k in given}, other


def validate_options(model: type[BenchmarkOptions], values: Mapping[str, Any] | BaseModel | None) -> Any:
    """``values`` as an instance of ``model`` (a mapping is validated; a ConfigError names a wrong flag)."""
    if isinstance(values, model):
        return values
    if isinstance(values, BaseModel):
        values = values.model_dump()
    try:
        return model.model_validate(dict(values or {}))
    except ValidationError as exc:
        raise options_error(exc, model) from None
