"""`assay eval retrieval --component rag|code`: one command, two components.

:class:`RetrievalBenchmark` builds the chosen component's benchmark and hands it every hook of the
:class:`~assay.exec.Benchmark` contract (:func:`benchmark_hooks`, forwarded generically, so a hook added to the
contract reaches the component without an edit here) and reads every class attribute of the contract
(``name``, ``suites``, ``metric_specs``, ...) from it, live; on the class they keep the wrapper's own values.
Only its ``Options`` are its own: the options of both components (:class:`RetrievalOptions`).
"""

from __future__ import annotations

import abc
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from assay.errors import ConfigError
from assay.evals.retrieval._ci import CI_JOBS
from assay.evals.retrieval._options import RetrievalOptions
from assay.exec import Benchmark, option_specs

__all__ = ["COMPONENTS", "RetrievalBenchmark", "benchmark_attributes", "benchmark_hooks", "component_class"]

COMPONENTS: dict[str, str] = {
    "rag": "assay.evals.retrieval._rag:RagRetrievalBenchmark",
    "code": "assay.evals.retrieval._code:CodeRetrievalBenchmark",
}

_B = TypeVar("_B", bound=type[Benchmark])


def component_class(component: str) -> type[Benchmark]:
    if component not in COMPONENTS:
        raise ConfigError(f"--component must be one of {', '.join(COMPONENTS)}, not {component!r}")
    module, _, attr = COMPONENTS[component].partition(":")
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


def benchmark_hooks() -> tuple[str, ...]:
    """The instance methods of the benchmark contract (not the constructor, not the classmethods)."""
    return tuple(n for n, v in vars(Benchmark).items() if inspect.isfunction(v) and not n.startswith("_"))


def benchmark_attributes() -> tuple[str, ...]:
    """The class attributes of the benchmark contract (``name``, ``suites``, ``metric_specs``, ...)."""
    return tuple(Benchmark.__annotations__)


def _forward(name: str) -> Callable[..., Any]:
    """A method that calls the component's ``name`` (awaited when the contract's hook is a coroutine)."""
    contract = getattr(Benchmark, name)
    if inspect.iscoroutinefunction(contract):

        async def hook(self: RetrievalBenchmark, *args: Any, **kwargs: Any) -> Any:
            return await getattr(self.inner, name)(*args, **kwargs)

    else:

        def hook(self: RetrievalBenchmark, *args: Any, **kwargs: Any) -> Any:
            return getattr(self.inner, name)(*args, **kwargs)

    hook.__name__, hook.__qualname__, hook.__doc__ = name, f"RetrievalBenchmark.{name}", contract.__doc__
    return hook


class _ComponentAttribute:
    """A contract attribute read from (and written to) the component; on the class, the wrapper's own value."""

    def __init__(self, name: str, own: Any) -> None:
        self.name, self.own = name, own

    def __get__(self, obj: RetrievalBenchmark | None, owner: type | None = None) -> Any:
        if obj is None or "inner" not in vars(obj):
            return self.own
        return getattr(obj.inner, self.name)

    def __set__(self, obj: RetrievalBenchmark, value: Any) -> None:
        setattr(obj.inner, self.name, value)


def _forwarding_every_hook(cls: _B) -> _B:
    for name in benchmark_hooks():
        setattr(cls, name, _forward(name))
    for name in benchmark_attributes():  # read live: a component may set its metric_specs in load_suite
        setattr(cls, name, _ComponentAttribute(name, getattr(cls, name)))
    abc.update_abstractmethods(cls)  # load_suite and run_case are abstract on the contract
    return cls


@_forwarding_every_hook
class RetrievalBenchmark(Benchmark):
    """Document retrieval (rag) or code search (code) quality, scale and robustness."""

    short_help = "Retrieval quality: --component rag (documents) or code (code search)."
    case_view = "assay.view._case:retrieval_view"
    ci_jobs = CI_JOBS

    name = "retrieval"
    help = "Retrieval quality: --component rag (documents) or code (code search)."

    Options = RetrievalOptions
    options: RetrievalOptions

    def __init__(self, options: RetrievalOptions | Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        component = self.options.component
        cls = component_class(component)
        own = set(cls.Options.model_fields)
        for other in COMPONENTS:
            if other == component:
                continue
            for spec in option_specs(component_class(other).Options):
                value = getattr(self.options, spec.name)
                if spec.name not in own and value not in (None, False, spec.default, ()):
                    flag = max((s for s, _ in spec.spellings()), key=len)
                    raise ConfigError(f"{flag} applies to --component {other}, not {component}")
        self.inner = cls(self.options.model_dump(include=own))
