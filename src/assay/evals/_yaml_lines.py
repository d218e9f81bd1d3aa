"""YAML with line numbers: each mapping carries ``__line__`` and each key's line is kept, so errors name them.

Shared by the benchmarks whose suites are YAML files (memory scenarios, agent scenarios)::

    data, key_lines = load_with_lines(text, path)   # ConfigError with the line on bad YAML
    line = line_at(data, ("turns", 2, "objective"), key_lines)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import ValidationError

from assay.errors import ConfigError

__all__ = [
    "KeyLines",
    "LineError",
    "LineLoader",
    "line_at",
    "load_with_lines",
    "refuse_duplicate_ids",
    "strip_lines",
]

KeyLines = dict[int, dict[Any, int]]


class LineError(ValueError):
    """A validation error that knows its line (raised from a validator, read back by the loader)."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        super().__init__(message)


class LineLoader(yaml.SafeLoader):
    """Records each mapping's line as ``__line__`` (and each key's line) so errors can name it."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        #: id(mapping) -> {key: line of that key}; the mappings live as long as the loaded data
        self.key_lines: KeyLines = {}


def _construct_mapping(loader: LineLoader, node: yaml.MappingNode) -> dict[str, Any]:
    mapping = loader.construct_mapping(node, deep=True)
    mapping["__line__"] = node.start_mark.line + 1
    lines: dict[Any, int] = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            lines[key_node.value] = key_node.start_mark.line + 1
    loader.key_lines[id(mapping)] = lines
    return mapping


LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_with_lines(text: str, path: str) -> tuple[Any, KeyLines]:
    """The YAML document in ``text`` with lines recorded; invalid YAML is a ConfigError naming path and line."""
    loader = LineLoader(text)
    try:
        return loader.get_single_data(), loader.key_lines
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(
            f"invalid YAML: {getattr(exc, 'problem', None) or exc}",
            path=path,
            line=mark.line + 1 if mark else None,
        ) from exc
    finally:
        loader.dispose()


def strip_lines(value: Any) -> Any:
    """A copy of ``value`` without the ``__line__`` keys the loader added."""
    if isinstance(value, dict):
        return {k: strip_lines(v) for k, v in value.items() if k != "__line__"}
    if isinstance(value, list):
        return [strip_lines(v) for v in value]
    return value


def _own_line(node: dict[Any, Any], key_lines: KeyLines | None) -> int | None:
    if "__line__" in node:
        return node["__line__"]
    lines = key_lines.get(id(node)) if key_lines else None  # its __line__ taken out: its first key's line
    return min(lines.values()) if lines else None


def line_at(data: Any, loc: tuple[Any, ...], key_lines: KeyLines | None = None) -> int | None:
    """The line of the deepest mapping or key on the path ``loc`` into ``data`` (a pydantic error's loc)."""
    line = _own_line(data, key_lines) if isinstance(data, dict) else None
    node = data
    for part in loc:
        if isinstance(node, dict) and key_lines and part in key_lines.get(id(node), {}):
            line = key_lines[id(node)][part]
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict):
            line = _own_line(node, key_lines) or line
    return line


class _HasIdAndPath(Protocol):
    id: str
    path: str


def refuse_duplicate_ids(items: Sequence[_HasIdAndPath]) -> None:
    """A ConfigError naming both files when two loaded scenarios share an id."""
    seen: dict[str, str] = {}
    for item in items:
        if item.id in seen:
            raise ConfigError(f"scenario id {item.id!r} is also used by {seen[item.id]}", path=item.path)
        seen[item.id] = item.path


def validation_error(exc: ValidationError, path: Path | str, data: Any, key_lines: KeyLines) -> ConfigError:
    """The first problem pydantic found in data loaded with :func:`load_with_lines`, as a ConfigError naming
    the file, the line and the field."""
    first = exc.errors()[0]
    loc = tuple(x for x in first["loc"] if x != "__line__")
    ctx_err = (first.get("ctx") or {}).get("error")
    line = ctx_err.line if isinstance(ctx_err, LineError) else line_at(data, loc, key_lines)
    where = ".".join(str(x) for x in loc)
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden" and loc:
        message = f"unknown field {loc[-1]!r}"
    return ConfigError(f"{where}: {message}" if where else message, path=str(path), line=line)
