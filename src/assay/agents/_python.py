"""The ``python`` harness: an agent that is a Python callable, ``python:pkg.module:fn`` (sync or async).

The callable is given, by keyword, whichever of these its signature names (all of them with ``**kwargs``):
``prompt``, ``history``, ``workdir``, ``route``, ``limits``, ``session_id``, ``spec``, ``model`` (the harness's
``model`` option, else the route's model name), ``env`` (what the agent's commands should run with:
:func:`~assay.agents._env.run_env`, the run's toolchain first on PATH, no provider key). It returns the answer as a
``str`` (the record is then "answer only"), or a dict / :class:`AgentResult` with ``answer`` and, optionally,
``tool_record`` (a list of :class:`ToolCallRecord`-shaped dicts; ``tool_calls`` is accepted as a synonym),
``usage``, ``transcript``, ``session_id``, ``model_ran``.

It runs in a child process (:mod:`assay.agents._python_child`) with the scrubbed environment of ``env`` (no
provider key) and, on Linux, in its own PID namespace (:mod:`assay.agents._pidns`): the eval's ``os.environ`` and
``/proc/<pid>/environ`` are out of its reach. At the wall clock the child's whole process group is ended
(``cut_off="wall_clock"``). What it is given travels pickled, what it returns as JSON.

A callable handed over as ``fn=`` that cannot be imported by name (a lambda, a closure, a function of
``__main__``) cannot be started in another process: it runs in this one, as the caller's own code (an async
one is cancelled at the wall clock; a sync one runs in a worker thread whose result is abandoned at the cap).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import json
import os
import pickle
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.agents._cliproc import contain, held, refuse_fence, run_streaming, summarize
from assay.agents._env import run_env
from assay.agents._harness import Harness, RunSpec
from assay.agents._pidns import own_pids
from assay.agents.record import AgentResult
from assay.errors import ConfigError

_ARGS = ("prompt", "history", "workdir", "route", "limits", "session_id", "spec", "model", "env")


def load_callable(target: str) -> Callable[..., Any]:
    """``pkg.module:fn`` (or ``pkg.module:Class.method``) imported; ConfigError naming the target otherwise."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"python harness target {target!r}: expected 'pkg.module:function'")
    try:
        obj: Any = import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"python harness target {target!r}: cannot import {module_name!r}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"python harness target {target!r}: {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f"python harness target {target!r}: {attr!r} is not callable")
    return obj


def _kwargs_for(fn: Callable[..., Any], values: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return values
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in values]
    missing = [n for n in missing if params[n].kind not in (inspect.Parameter.VAR_POSITIONAL,)]
    if missing:
        raise ConfigError(
            f"python harness: the agent asks for {missing}, which it is never given (given: {list(_ARGS)})"
        )
    return {k: v for k, v in values.items() if k in params}


def to_result(value: Any, harness: str) -> AgentResult:
    """What the callable returned as a record; ValueError when it is none of the accepted shapes."""
    if isinstance(value, AgentResult):
        return value.model_copy(update={"harness": harness})
    if isinstance(value, str):
        return AgentResult(harness=harness, answer=value, record_level="answer_only")
    if isinstance(value, dict):
        data = dict(value)
        if "tool_calls" in data and "tool_record" not in data:
            data["tool_record"] = data.pop("tool_calls")
        data.setdefault("record_level", "full" if "tool_record" in data else "answer_only")
        data["harness"] = harness
        try:
            return AgentResult.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"the agent returned a dict that is not an AgentResult: {exc}") from exc
    raise ValueError(f"the agent returned {type(value).__name__}; expected str, dict or AgentResult")


def _in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
    """Run a sync agent in a daemon thread (an abandoned one never holds up the event loop's shutdown)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, exc: BaseException | None) -> None:
        if future.done():
            return
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(value)

    def work() -> None:
        try:
            value, exc = fn(**kwargs), None
        except BaseException as e:  # handed to the awaiting side
            value, exc = None, e
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, value, exc)

    threading.Thread(target=work, name="assay-python-agent", daemon=True).start()
    return future


def _finish(result: AgentResult, spec: RunSpec) -> AgentResult:
    """An agent's own record, completed: steps from its tool calls, the run's session."""
    if result.steps == 0:
        result.steps = len(result.tool_record)
    if result.session_id is None:
        result.session_id = spec.session_id
    return result


def importable_name(fn: Callable[..., Any]) -> str | None:
    """``pkg.module:qualname`` that imports ``fn`` itself in another process, or None (a lambda, a closure, a
    function of ``__main__``)."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    try:
        found = load_callable(f"{module}:{qualname}")
    except ConfigError:
        return None
    return f"{module}:{qualname}" if found is fn else None


def _import_path() -> list[str]:
    """This process's ``sys.path`` as absolute folders: the child imports the agent (and assay) from the same."""
    return [os.getcwd() if p == "" else os.path.abspath(p) for p in sys.path]


def _import_binds(target: str, workdir: Path) -> list[Path]:
    """What a fenced child needs bound to import assay and ``target``: this venv, assay's package, and the
    folder the target's top-level module or package was found in (its sibling modules come with it). Where that
    folder is the one the eval runs from or holds the workdir (a project's checkout: its answer keys, its
    results), only its Python modules and packages (folders holding ``.py`` files) are bound, not its data."""
    from assay.agents.fence import ASSAY_PACKAGE

    binds = [Path(sys.prefix), ASSAY_PACKAGE]
    top = target.partition(":")[0].split(".")[0]
    found = importlib.util.find_spec(top)
    origin = Path(found.origin) if found is not None and found.origin else None
    if found is not None and found.submodule_search_locations:
        folders = {Path(p).resolve().parent for p in found.submodule_search_locations}
    elif origin is not None and origin.is_file():
        folders = {origin.resolve().parent}
    else:
        folders = set()
    here, work = Path.cwd().resolve(), workdir.resolve()
    for folder in folders:
        if folder in (here, Path("/")) or work.is_relative_to(folder) or here.is_relative_to(folder):
            binds += [
                p
                for p in folder.iterdir()
                if (p.suffix == ".py" and p.is_file()) or (p.is_dir() and any(p.glob("*.py")))
            ]
        else:
            binds.append(folder)
    return [b for b in dict.fromkeys(b.resolve() for b in binds) if b.exists()]


async def _run_child(target: str, kwargs: dict[str, Any], spec: RunSpec, env: dict[str, str]) -> AgentResult:
    """Run ``target(**kwargs)`` in a child process with ``env``; its record, or a cut-off or error record."""
    with tempfile.TemporaryDirectory(prefix="assay-python-agent-") as tmp:
        request, result = Path(tmp) / "request.pickle", Path(tmp) / "result.json"
        request.write_bytes(pickle.dumps({"target": target, "kwargs": kwargs}))
        argv = [sys.executable, "-m", "assay.agents._python_child", str(request), str(result)]
        child_env = {**env, "PYTHONPATH": os.pathsep.join(_import_path())}
        if spec.fence:
            from assay.agents.fence import fence_argv

            argv = fence_argv(
                spec, argv, env=child_env, binds_ro=_import_binds(target, spec.workdir), binds_rw=[Path(tmp)]
            )
        else:
            argv = own_pids(held(argv, spec.limits, spec.workdir))
        proc = await run_streaming(
            argv, cwd=spec.workdir, env=child_env, wall_clock_s=spec.limits.wall_clock_s, limits=spec.limits
        )
        if proc.timed_out:
            record = AgentResult(
                harness="python",
                cut_off="wall_clock",
                record_level="answer_only",
                elapsed_s=proc.elapsed_s,
                session_id=spec.session_id,
            )
        elif not result.is_file():
            why = summarize(proc.stderr, 600) or "no output"
            record = AgentResult(
                harness="python",
                error=f"the agent's process ended (exit {proc.exit_code}) without an answer: {why}",
                exit_code=proc.exit_code,
                record_level="answer_only",
                elapsed_s=proc.elapsed_s,
            )
        else:
            out = json.loads(result.read_text(encoding="utf-8"))
            if "error" in out:
                record = AgentResult(
                    harness="python", error=out["error"], record_level="answer_only", elapsed_s=proc.elapsed_s
                )
            else:
                record = _finish(AgentResult.model_validate(out["result"]), spec)
                record.elapsed_s = record.elapsed_s or proc.elapsed_s
    return contain(record, proc, spec.limits, fenced=spec.fence)


class PythonHarness(Harness):
    """Options: ``target`` (``pkg.module:fn``), or ``fn`` (the callable itself)."""

    name = "python"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        unknown = set(options) - {"target", "fn", "model"}
        if unknown:
            raise ConfigError(
                f"python harness: unknown option(s) {sorted(unknown)} (known: fn, model, target)"
            )
        fn = options.get("fn")
        if fn is None:
            target = options.get("target")
            if not target:
                raise ConfigError("python harness: give the agent as python:pkg.module:function")
            fn = load_callable(str(target))
        if not callable(fn):
            raise ConfigError(f"python harness: fn={fn!r} is not callable")
        self.fn: Callable[..., Any] = fn
        #: how the child process imports the agent; None: it runs in this process (see the module doc)
        self.target: str | None = str(options["target"]) if options.get("fn") is None else importable_name(fn)

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        if self.target is None:  # the caller's own callable, run in this process: nothing to fence
            refuse_fence(spec.fence, f"{self.name} (an in-process callable)")
        values = {
            "prompt": prompt,
            "history": list(spec.history),
            "workdir": spec.workdir,
            "route": spec.route,
            "limits": spec.limits,
            "session_id": spec.session_id,
            "spec": spec,
            "model": self.options.get("model") or (spec.route.model if spec.route else None),
            "env": run_env(spec),
        }
        kwargs = _kwargs_for(self.fn, values)
        if self.target is not None:
            return await _run_child(self.target, kwargs, spec, values["env"])
        started = time.monotonic()
        cap = spec.limits.wall_clock_s
        if inspect.iscoroutinefunction(self.fn):
            call = self.fn(**kwargs)
        else:
            call = _in_daemon_thread(self.fn, kwargs)
        try:
            value = await asyncio.wait_for(call, timeout=cap)
            if inspect.isawaitable(value):  # a sync function that returned a coroutine
                value = await asyncio.wait_for(value, timeout=cap)
        except TimeoutError:
            return AgentResult(
                harness=self.name,
                cut_off="wall_clock",
                record_level="answer_only",
                elapsed_s=time.monotonic() - started,
                session_id=spec.session_id,
            )
        except Exception as exc:
            where = traceback.extract_tb(exc.__traceback__)[-1]
            return AgentResult(
                harness=self.name,
                error=f"{type(exc).__name__}: {exc} (at {where.filename}:{where.lineno})",
                record_level="answer_only",
                elapsed_s=time.monotonic() - started,
            )
        try:
            result = to_result(value, self.name)
        except ValueError as exc:
            return AgentResult(harness=self.name, error=str(exc), elapsed_s=time.monotonic() - started)
        result.elapsed_s = result.elapsed_s or time.monotonic() - started
        return _finish(result, spec)
