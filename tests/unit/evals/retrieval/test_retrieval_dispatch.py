"""`eval retrieval` hands every hook and class attribute of the benchmark contract to its component."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import pytest

from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval import _benchmark as retrieval
from assay.exec import Benchmark

#: every instance method of the contract, read off the base class (a hook added there is checked here too)
HOOKS = sorted(
    name for name, value in vars(Benchmark).items() if inspect.isfunction(value) and not name.startswith("_")
)


class _Recorder(Benchmark):
    """A component whose every hook records its call and answers with a value of its own."""

    name = "fake-component"
    help = "a component"
    suites = ("pr", "other")
    default_suite = "other"
    metric_specs: ClassVar[tuple[Any, ...]] = ()
    pass_fail = False
    interruptible = False
    remote_refusal = "it cannot"

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def load_suite(self, suite: str) -> Any:
        self.calls.append(("load_suite", (suite,)))
        return ("answer", "load_suite")

    async def run_case(self, case: Any, ctx: Any) -> Any:
        self.calls.append(("run_case", (case, ctx)))
        return ("answer", "run_case")


def _record(name: str) -> Any:
    if inspect.iscoroutinefunction(getattr(Benchmark, name)):

        async def hook(self: _Recorder, *args: Any) -> Any:
            self.calls.append((name, args))
            return ("answer", name)

    else:

        def hook(self: _Recorder, *args: Any) -> Any:
            self.calls.append((name, args))
            return ("answer", name)

    return hook


for _name in HOOKS:
    if _name not in vars(_Recorder):
        setattr(_Recorder, _name, _record(_name))


@pytest.fixture
def wrapped(monkeypatch: pytest.MonkeyPatch) -> RetrievalBenchmark:
    monkeypatch.setattr(retrieval, "component_class", lambda component: _Recorder)
    return RetrievalBenchmark({"component": "rag"})


def test_the_contract_has_the_hooks_this_test_expects() -> None:
    # a sanity floor: the hooks the wrapper once forwarded by hand and the five it dropped are all found
    assert {"load_suite", "run_case", "report_plots", "secret_values", "scorecard_extra"} <= set(HOOKS)
    assert "attempt_resources" in HOOKS


@pytest.mark.parametrize("hook", HOOKS)
async def test_every_hook_of_the_contract_reaches_the_component(
    hook: str, wrapped: RetrievalBenchmark
) -> None:
    inner = wrapped.inner
    assert isinstance(inner, _Recorder)
    params = list(inspect.signature(getattr(Benchmark, hook)).parameters)[1:]
    args = tuple(object() for _ in params)
    got = getattr(wrapped, hook)(*args)
    if inspect.isawaitable(got):
        got = await got
    assert got == ("answer", hook), f"{hook} answered with the wrapper's own value, not the component's"
    assert inner.calls == [(hook, args)], f"{hook} did not reach the component with its arguments"


def test_every_class_attribute_is_the_component_s_and_read_live(wrapped: RetrievalBenchmark) -> None:
    inner = wrapped.inner
    for attr in Benchmark.__annotations__:
        assert getattr(wrapped, attr) == getattr(_Recorder, attr), attr
    inner.metric_specs = ("set", "in", "load_suite")  # type: ignore[misc]
    assert wrapped.metric_specs == ("set", "in", "load_suite")
    # the class keeps its own: the registry and the command read RetrievalBenchmark.name and its help
    assert RetrievalBenchmark.name == "retrieval"
    assert RetrievalBenchmark.remote_refusal is None and RetrievalBenchmark.default_suite == "pr"


def test_the_real_components_answer_through_the_wrapper() -> None:
    rag, code = RetrievalBenchmark({}), RetrievalBenchmark({"component": "code"})
    assert (rag.name, code.name) == ("retrieval-rag", "retrieval-code")
    assert rag.interruptible is False and code.suites == type(code.inner).suites
    assert rag.secret_values() == [] and code.scorecard_extra([]) == {}
