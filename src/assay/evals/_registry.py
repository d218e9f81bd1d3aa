"""Benchmarks by name: the built-in ones, entry points (group ``assay.benchmarks``) and ``ASSAY_PLUGINS``.

Built-ins are named by ``module:Class`` and imported only when used, so ``assay --help`` stays fast and a
benchmark whose optional dependency is missing does not break the others.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from assay.errors import ConfigError
from assay.exec import Benchmark

BUILTIN: dict[str, str] = {
    "agent": "assay.evals.agent:AgentBenchmark",
    "memory": "assay.evals.memory:MemoryBenchmark",
    "retrieval": "assay.evals.retrieval:RetrievalBenchmark",
    "code": "assay.evals.code:CodeBenchmark",
    "tasks": "assay.evals.tasks:TasksBenchmark",
    "benchmark": "assay.evals.serving:ServingBenchmark",
    "sessions": "assay.evals.sessions:SessionsBenchmark",
}

_registered: dict[str, type[Benchmark]] = {}


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Register a benchmark class by its ``name`` (usable as a decorator)."""
    _registered[cls.name] = cls
    return cls


def _plugin_specs() -> dict[str, str]:
    specs = dict(BUILTIN)
    for ep in entry_points(group="assay.benchmarks"):
        specs[ep.name] = ep.value
    for item in filter(None, (os.environ.get("ASSAY_PLUGINS") or "").split(",")):
        if ":" not in item:
            raise ConfigError(f"ASSAY_PLUGINS entry {item!r} must look like 'module:Class'")
        module, _, attr = item.strip().partition(":")
        specs[f"@{module}:{attr}"] = item.strip()
    return specs


def _load(spec: str) -> type[Benchmark]:
    module, _, attr = spec.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
        raise ConfigError(f"{spec} is not an assay Benchmark subclass")
    return cls


def available() -> dict[str, str]:
    """Names of every benchmark that can be loaded, mapped to where it comes from."""
    names = {name: spec for name, spec in _plugin_specs().items() if not name.startswith("@")}
    for spec in _plugin_specs().values():
        if spec not in names.values():
            try:
                cls = _load(spec)
            except ImportError as exc:
                raise ConfigError(f"ASSAY_PLUGINS: cannot import {spec}: {exc}") from exc
            names[cls.name] = spec
    for name, cls in _registered.items():
        names.setdefault(name, f"{cls.__module__}:{cls.__qualname__}")
    return names


def get_benchmark(name: str) -> type[Benchmark]:
    """The benchmark class registered under ``name``."""
    if name in _registered:
        return _registered[name]
    specs = available()
    if name not in specs:
        raise ConfigError(f"unknown benchmark {name!r}; known: {', '.join(sorted(specs))}")
    cls = _load(specs[name])
    _registered[name] = cls
    return cls
