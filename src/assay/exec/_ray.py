"""Run attempts as Ray tasks on a cluster; the caller keeps the journal on the driver.

With ``--ray-address auto`` (the default) and no Ray instance running, the run starts a local one on loopback
(what ``ray.init()`` does, bound to 127.0.0.1), says so, and stops it when the run ends.

:class:`RayExecutor` turns one attempt spec into one Ray task and awaits its reply. It knows nothing of
benchmarks: the task's function and its job (plain data) come from the caller. What it adds over a local
call is what a cluster can do to an attempt:

- a worker (or its node) lost mid-attempt: Ray runs the task once more elsewhere (``max_retries=1``); a second
  loss raises :class:`WorkerLost`, which the caller records as INFRA_ERROR;
- the head lost (stopped, unreachable, or this driver's session shut down): :class:`HeadLost`, which stops the
  run as an outage. In-flight results arrive straight from the workers, so a dead head is only seen by asking
  it: while an attempt is in flight the head is probed every :data:`PROBE_EVERY_S` seconds.

Ray is imported only here, and only when ``--executor ray`` is asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.errors import ConfigError, InfraError, MissingDependencyError
from assay.exec._benchmark import AttemptResources
from assay.exec._local import AttemptSpec

__all__ = [
    "HeadLost",
    "RayCluster",
    "RayExecutor",
    "WorkerLost",
    "check_address",
    "check_resources",
    "connect",
    "forwarded_env",
]

#: seconds between two probes of the head while attempts are in flight, and how long one probe may take
PROBE_EVERY_S = 1.0
PROBE_TIMEOUT_S = 5.0
#: how long joining waits for the head to accept a connection
CONNECT_TIMEOUT_S = 5.0
#: environment variables that stay on the driver (they choose the executor, not how an attempt runs)
_DRIVER_ONLY = frozenset({"ASSAY_EXECUTOR", "ASSAY_RAY_ADDRESS", "ASSAY_NO_LOCK"})
#: Ray's own switch for a single-machine instance: with it off, the node's address is the loopback one and
#: every server of the instance listens on 127.0.0.1 only
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_ADDRESS = re.compile(r"^(auto|local|(ray://)?[A-Za-z0-9_.\-\[\]:]+:\d+)$")


class WorkerLost(Exception):
    """The attempt's worker (or node) died on its try and on its retry."""


class HeadLost(Exception):
    """The Ray head stopped answering, or the driver's Ray session ended, while the run went on."""


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError("ray", "ray") from exc
    return ray


def check_address(address: str) -> str:
    """``auto``, ``local``, ``HOST:PORT`` or ``ray://HOST:PORT``; anything else is refused naming the flag."""
    if not _ADDRESS.match(address):
        raise ConfigError(
            f"--ray-address {address!r} (or ASSAY_RAY_ADDRESS): expected auto, local, HOST:PORT or ray://HOST:PORT"
        )
    return address


@dataclass
class RayCluster:
    """The Ray session the run uses; ``owned``: this run started it and shuts it down after."""

    address: str
    owned: bool
    client: bool
    #: this run started the instance on loopback because none was running (it said so, and stops it)
    started_here: bool = False

    def close(self) -> None:
        if self.owned:
            ray = _ray()
            if ray.is_initialized():
                ray.shutdown()
            if self.started_here:
                _loopback(ray, False)
                print("--executor ray: stopped the local Ray instance this run started", file=sys.stderr)


def connect(address: str) -> RayCluster:
    """Join the cluster at ``address`` (a session already open in this process is used as it is).

    An unreachable head raises :class:`InfraError` (an outage: exit code 3).
    """
    check_address(address)
    ray = _ray()
    if ray.is_initialized():
        return RayCluster(address, owned=False, client=_client_mode(ray))
    if address == "local" or (address == "auto" and _none_running(ray)):
        return _start_local(ray, said=address == "auto")
    kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    _check_reachable(ray, address)
    try:
        ray.init(address=address, **kwargs)
    except ImportError as exc:  # ray:// needs the Ray client (grpcio)
        raise MissingDependencyError("ray[client]", "ray") from exc
    except (ConnectionError, TimeoutError, RuntimeError) as exc:
        hint = (
            ""
            if os.environ.get("RAY_AUTH_MODE")
            else " (a cluster with token authentication: RAY_AUTH_MODE=token)"
        )
        raise InfraError(f"cannot reach the Ray head at {address}: {_one_line(exc)}{hint}") from None
    return RayCluster(address, owned=True, client=address.startswith("ray://"))


def _none_running(ray: Any) -> bool:
    """No Ray instance to join: no RAY_ADDRESS, no ``ray start`` recorded, no GCS process on this machine."""
    if os.environ.get("RAY_ADDRESS"):
        return False
    try:
        ray._private.services.canonicalize_bootstrap_address_or_die("auto")
    except ConnectionError as exc:  # several running instances is another error: joining one is refused
        return "could not find any running ray instance" in str(exc).lower()
    except AttributeError:  # another Ray version: let ray.init say what it finds
        return False
    return False


def _loopback(ray: Any, on: bool) -> None:
    """Make this process (and the instance it starts) take 127.0.0.1 as the node's address, or undo it."""
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if on:
        os.environ[_LOOPBACK_ENV] = "0"
    else:
        os.environ.pop(_LOOPBACK_ENV, None)
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = not on


def _start_local(ray: Any, *, said: bool) -> RayCluster:
    """A Ray instance of this machine's CPUs on loopback, owned by the run (shut down by ``close``)."""
    _loopback(ray, True)
    try:
        ray.init(address="local", include_dashboard=False, log_to_driver=False, configure_logging=False)
    except (ConnectionError, TimeoutError, RuntimeError) as exc:
        _loopback(ray, False)
        raise InfraError(f"could not start a local Ray instance: {_one_line(exc)}") from None
    except BaseException:
        _loopback(ray, False)
        raise
    if said:
        cpus = ray.cluster_resources().get("CPU", 0)
        print(
            f"--executor ray: no Ray instance is running, so this run started a local one on 127.0.0.1 "
            f"({cpus:g} CPUs) and stops it when the run ends (`ray start --head` keeps one; --ray-address "
            "names a cluster)",
            file=sys.stderr,
        )
    return RayCluster("local", owned=True, client=False, started_here=said)


def _check_reachable(ray: Any, address: str) -> None:
    """A head that does not accept connections is refused in seconds (``ray.init`` would wait minutes)."""
    endpoint = address.removeprefix("ray://")
    try:
        if address == "auto":  # the cluster RAY_ADDRESS or the newest local `ray start` names
            endpoint = ray._private.services.canonicalize_bootstrap_address_or_die("auto")
        host, _, port = endpoint.rpartition(":")
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except AttributeError:  # another Ray version: let ray.init find it
        return
    except (OSError, ValueError) as exc:
        raise InfraError(f"cannot reach the Ray head at {address}: {_one_line(exc)}") from None


def check_resources(resources: AttemptResources) -> None:
    """Refuse requests no node of the cluster can meet: Ray would queue such tasks forever."""
    total = _ray().cluster_resources()
    wanted = {"CPU": resources.cpus, **resources.custom}
    if resources.memory_mb:
        wanted["memory"] = resources.memory_mb * 1024 * 1024
    short = [
        f"{k} {v:g} (the cluster has {total.get(k, 0):g})" for k, v in wanted.items() if total.get(k, 0) < v
    ]
    if short:
        raise ConfigError(
            "--executor ray: each attempt asks for " + ", ".join(short) + "; start the workers with the "
            "resource (`ray start --resources '{\"sandbox\": 4}'`) or run with --executor local"
        )


def _client_mode(ray: Any) -> bool:
    try:
        return bool(ray.util.client.ray.is_connected())
    except AttributeError:
        return False


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:300] + "...") if len(text) > 300 else (text or type(exc).__name__)


def forwarded_env() -> dict[str, str]:
    """The ``ASSAY_*`` settings of the driver, which the workers run under (provider keys are not sent)."""
    return {k: v for k, v in os.environ.items() if k.startswith("ASSAY_") and k not in _DRIVER_ONLY}


class RayExecutor:
    """Run ``entry(job, spec_dict)`` as one Ray task per attempt, with the benchmark's resource requests."""

    def __init__(
        self,
        cluster: RayCluster,
        entry: Callable[[Any, dict[str, Any]], Any],
        job: Any,
        resources: AttemptResources,
        env_vars: dict[str, str] | None = None,
    ) -> None:
        ray = _ray()
        self.cluster = cluster
        self._ray = ray
        self._errors = _lost_worker_errors(ray)
        options: dict[str, Any] = {
            "num_cpus": resources.cpus,
            "max_retries": 1,  # a lost worker: once more, wherever Ray places it
            "retry_exceptions": False,  # an attempt's own failure is a result, never retried
        }
        if resources.memory_mb:
            options["memory"] = int(resources.memory_mb) * 1024 * 1024
        if resources.custom:
            options["resources"] = dict(resources.custom)
        if env_vars:
            options["runtime_env"] = {"env_vars": dict(env_vars)}
        self._remote = ray.remote(entry).options(**options)
        self._job_ref = ray.put(job)  # sent to the object store once, not with every task
        self._probe_lock = asyncio.Lock()
        self._last_ok = 0.0

    async def call(self, spec: AttemptSpec) -> Any:
        """The worker's reply for ``spec``. Raises :class:`WorkerLost` or :class:`HeadLost`."""
        await self._check_head()
        try:
            ref = self._remote.remote(self._job_ref, spec.to_dict())
            future = asyncio.wrap_future(ref.future())
        except Exception as exc:  # the session went away between the probe and the submit
            raise HeadLost(await self._lost_reason() or _one_line(exc)) from None
        try:
            while True:
                done, _ = await asyncio.wait([future], timeout=PROBE_EVERY_S)
                if done:
                    break
                await self._check_head()
            return future.result()
        except (asyncio.CancelledError, HeadLost):
            self._cancel(ref)
            future.add_done_callback(_retrieve)  # its TaskCancelledError is expected, not left unread
            raise
        except self._errors as exc:
            raise WorkerLost(f"the Ray worker was lost twice (try and retry): {_one_line(exc)}") from None
        except self._ray.exceptions.RayTaskError as exc:  # the worker entry itself broke (not the attempt)
            raise WorkerLost(f"the Ray task failed outside the attempt: {_one_line(exc)}") from None
        except Exception as exc:
            reason = await self._lost_reason()
            if reason is None:
                raise
            raise HeadLost(reason) from exc

    def _cancel(self, ref: Any) -> None:
        with contextlib.suppress(Exception):  # the head may be gone; the attempt is journaled NOT_RUN anyway
            self._ray.cancel(ref)

    async def _check_head(self) -> None:
        """Raise :class:`HeadLost` unless the head answered within the last :data:`PROBE_EVERY_S` seconds."""
        async with self._probe_lock:  # one probe at a time, shared by every attempt in flight
            if not self._ray.is_initialized():
                raise HeadLost(await self._lost_reason() or "this driver's Ray session was shut down")
            if time.monotonic() - self._last_ok < PROBE_EVERY_S:
                return
            reason = await self._lost_reason()
            if reason is not None:
                raise HeadLost(reason)
            self._last_ok = time.monotonic()

    async def _lost_reason(self) -> str | None:
        """Why the head is lost, or None when it answers."""
        ray = self._ray
        where = f"the Ray head at {self.cluster.address}"
        if not ray.is_initialized():
            return f"{where}: this driver's Ray session was shut down"
        if self.cluster.client:
            return None if _client_mode(ray) else f"{where}: the Ray client lost its connection"
        gcs = getattr(ray._private.worker.global_worker, "gcs_client", None)
        if gcs is None:
            return f"{where}: this driver's Ray session was shut down"
        try:
            await asyncio.to_thread(gcs.internal_kv_get, b"assay-probe", b"assay", timeout=PROBE_TIMEOUT_S)
        except Exception as exc:  # any failure to answer is the head being gone
            return f"{where} did not answer within {PROBE_TIMEOUT_S:g}s ({_one_line(exc)})"
        return None


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _lost_worker_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's errors for a worker, node or object lost under a task (whichever this Ray version has)."""
    names = (
        "WorkerCrashedError",
        "NodeDiedError",
        "ActorDiedError",
        "LocalRayletDiedError",
        "ObjectLostError",
        "OutOfMemoryError",
    )
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))
