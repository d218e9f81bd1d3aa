"""The fence: run an agent's process under bubblewrap, seeing only what its task needs.

    with GatewayRelay(gateway_port) as relay:
        argv = fenced_command(["claude", "-p", prompt], workdir, allow_port=gateway_port, relay=relay,
                              env=agent_env(route=route), binds_ro=[toolchain])
        subprocess.run(argv)

Inside, the sandbox is built from an empty root: the workdir read-write at its own path; the system read-only
(``/usr``, the ``/bin``/``/lib`` links, a short list of ``/etc`` files, the interpreter that runs the relay); a
fresh ``/tmp``, ``/proc`` and a minimal ``/dev``; a fresh HOME. Everything else (answer keys, other tasks'
workdirs, earlier results, the project and its venv) is absent because it is never bound; ``hide`` covers what
lies *inside* a bound folder. No capabilities, no nested user namespaces, a network namespace with loopback only:
the one allowed port is the gateway's, reached through :mod:`assay.agents._fence_relay` (a Unix socket bound in,
a listener on ``127.0.0.1:PORT`` inside, run by :mod:`assay.agents._inside`, which also holds the agent to its
limits). The environment is exactly ``env`` (``--clearenv``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from assay.agents._cliproc import INSIDE_SCRIPT, interpreter, keeper_options
from assay.agents._fence_relay import UnixToTcpRelay
from assay.agents._harness import Route, RunSpec
from assay.agents._pidns import own_pids, pid_isolation
from assay.errors import ConfigError

__all__ = [
    "ASSAY_PACKAGE", "FenceChoice", "GatewayRelay", "fence_argv", "fence_available", "fenced_command", "own_pids", "pid_isolation",
    "require_fence", "resolve_fence", "route_ports", "shared_relay", "unfenced_note",
]  # fmt: skip

#: where the fence's own files appear inside the sandbox
INSIDE_DIR = "/run/assay-fence"
#: the folder of the installed ``assay`` package, bound read-only for a fenced child that imports assay (an
#: editable install keeps it outside the venv)
ASSAY_PACKAGE = Path(__file__).resolve().parents[1]
#: HOME inside the sandbox when the caller gives none (a fresh tmpfs)
INSIDE_HOME = "/home/agent"
_ETC = (
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "gai.conf", "localtime", "timezone",
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates", "os-release",
    "mime.types", "protocols", "services", "debian_version", "gitconfig", "inputrc", "magic",
)  # fmt: skip
_ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


@dataclass(frozen=True)
class FenceChoice:
    """Whether a run's agents are fenced, and what the run says about it once (report and meta; None: fenced)."""

    on: bool
    note: str | None = None


#: harnesses that run no agent process of their own (nothing to fence: the fence is off for them unless asked)
NO_PROCESS_HARNESSES = ("http",)


def resolve_fence(asked: bool | None, harness: str | None = None) -> FenceChoice:
    """``--fence`` (True: required, ConfigError where it cannot run), ``--no-fence`` (False), or neither (None:
    on wherever bubblewrap works here and ``harness`` runs a process, else off with the reason)."""
    if asked is False:
        return FenceChoice(False, "--no-fence: the agent ran unfenced (it could reach what the eval can)")
    base = (harness or "").partition(":")[0]
    if asked is None and base in NO_PROCESS_HARNESSES:
        return FenceChoice(False, f"the fence is off: the {base} harness runs no agent process to fence")
    reason = fence_available()
    if reason is None:
        return FenceChoice(True)
    if asked:
        raise ConfigError(f"--fence: {reason}")
    return FenceChoice(False, f"the fence is off: {reason}")


def unfenced_note(fence: bool) -> str | None:
    """For a run's record: why an unfenced agent can see the eval's processes here (None: fenced, or in its own
    PID namespace, as :func:`own_pids` puts every unfenced agent process where the machine allows)."""
    return None if fence else pid_isolation()


def _bwrap(path: str | None = None) -> str | None:
    return shutil.which("bwrap", path=path)


@lru_cache(maxsize=8)
def _probe(bwrap: str) -> str | None:
    cmd = [bwrap, *_isolation(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({bwrap}) did not run: {exc}"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return f"bubblewrap cannot create namespaces here: {why}"
    return None


def fence_available(path: str | None = None) -> str | None:
    """None when the fence works here, else the one-line reason (``path``: the PATH to find bwrap on)."""
    if not sys.platform.startswith("linux"):
        return f"the fence needs Linux (bubblewrap); this is {sys.platform}"
    bwrap = _bwrap(path)
    if bwrap is None:
        return "bubblewrap is not installed (no bwrap on PATH; Debian/Ubuntu: apt-get install bubblewrap)"
    return _probe(bwrap)


def require_fence(path: str | None = None) -> str:
    """The bwrap binary, or ConfigError with the one line saying why ``--fence`` cannot be honoured."""
    reason = fence_available(path)
    if reason is not None:
        raise ConfigError(f"--fence: {reason}")
    bwrap = _bwrap(path)
    assert bwrap is not None
    return bwrap


def _isolation() -> list[str]:
    return [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ]


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _ROOT_LINKS:
        p = Path("/", name)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    for name in _ETC:
        p = Path("/etc", name)
        if p.exists():
            args += ["--ro-bind", str(p), str(p)]
    for p in sorted(Path("/etc").glob("python3*")):
        args += ["--ro-bind", str(p), str(p)]
    for p in sorted(Path("/usr/local/lib").glob("python3*/*-packages")):  # pip's, not the distro's
        args += ["--tmpfs", str(p)]
    return args


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def _check_workdir(workdir: Path) -> None:
    """A workdir that would bind the host's shared folders (or the venv running assay) defeats the fence."""
    shared = {Path(p) for p in ("/", "/tmp", "/var/tmp", "/home", "/root", "/usr", "/etc", "/var", "/run")}
    shared.add(Path.home().resolve())
    if workdir in shared:
        raise ConfigError(f"--workdir {workdir}: too wide to fence (a task needs a folder of its own)")
    venv = Path(sys.prefix).resolve()
    if venv == workdir or venv.is_relative_to(workdir):
        raise ConfigError(
            f"--workdir {workdir}: contains the Python running assay ({venv}); fence a task folder"
        )


def fenced_command(
    argv: Sequence[str],
    workdir: Path | str,
    *,
    allow_port: int | Iterable[int] | None = None,
    relay: GatewayRelay | Mapping[int, Path] | None = None,
    hide: Iterable[Path | str] = (),
    binds_ro: Iterable[Path | str] = (),
    binds_rw: Iterable[Path | str] = (),
    env: Mapping[str, str] | None = None,
    home: Path | str | None = None,
    bwrap: str | None = None,
    keeper: Sequence[str] | None = None,
    chdir: Path | str | None = None,
) -> list[str]:
    """The argv that runs ``argv`` fenced in ``workdir`` (see the module doc; ``chdir``: where it starts, inside
    the workdir, default the workdir).

    ``allow_port``: the gateway port(s) reachable inside, through ``relay`` (a started :class:`GatewayRelay`,
    or port -> Unix socket); without one, a relay shared by this process is started for each port.
    ``binds_ro``/``binds_rw``: extra paths bound at their own path (the toolchain, the ``gh`` stand-in's log).
    ``hide``: paths inside a bound folder that must be absent (an empty tmpfs or /dev/null over them).
    ``home``: a folder bound read-write as HOME (kept between turns); None gives a fresh, empty one.
    ``env``: the whole environment inside (build it with :func:`assay.agents._env.agent_env`); HOME and TMPDIR
    are set by the fence. ``keeper``: the options of :mod:`assay.agents._inside` (the limits, the report pipe;
    :func:`assay.agents._cliproc.keeper_options`), which then runs inside between the wall and the agent."""
    bwrap = bwrap or require_fence()
    workdir = Path(workdir).resolve()
    if not workdir.is_dir():
        raise ConfigError(f"--workdir {workdir}: not a folder")
    _check_workdir(workdir)
    ports = [allow_port] if isinstance(allow_port, int) else list(allow_port or [])
    sockets = _sockets_for(ports, relay)
    args = [bwrap, *_isolation(), *_system_binds(), "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    exe, prefix = interpreter()
    bound = [Path("/usr"), workdir]
    if prefix is not None:
        args += ["--ro-bind", str(prefix), str(prefix)]
        for kind in ("purelib", "platlib"):  # the host's global site-packages stays out
            lib = Path(sysconfig.get_path(kind, vars={"base": str(prefix), "platbase": str(prefix)}))
            if lib.is_dir() and str(lib) not in args:
                args += ["--tmpfs", str(lib)]
        bound.append(prefix)
    for p in binds_ro:
        rp = Path(p).resolve()
        if not rp.exists():
            raise ConfigError(f"fence: read-only bind {p}: no such path")
        args += ["--ro-bind", str(rp), str(rp)]
        bound.append(rp)
    for p in binds_rw:
        rp = Path(p).resolve()
        if not rp.exists():
            raise ConfigError(f"fence: read-write bind {p}: no such path")
        args += ["--bind", str(rp), str(rp)]
        bound.append(rp)
    args += ["--bind", str(workdir), str(workdir)]
    if home is not None:
        home_in = str(Path(home).resolve())
        args += ["--bind", home_in, home_in]
    else:
        home_in = INSIDE_HOME
        args += ["--tmpfs", INSIDE_HOME]
    for p in hide:
        rp = Path(p).resolve()
        if not rp.exists() or not _under(rp, bound):
            continue  # never bound: already absent
        args += ["--tmpfs", str(rp)] if rp.is_dir() else ["--ro-bind", "/dev/null", str(rp)]
    inside_env = dict(env if env is not None else {"PATH": "/usr/local/bin:/usr/bin:/bin"})
    inside_env |= {"HOME": home_in, "TMPDIR": "/tmp"}
    args += ["--clearenv"]
    for key, value in inside_env.items():
        args += ["--setenv", key, value]
    args += ["--chdir", str(Path(chdir).resolve() if chdir is not None else workdir)]
    if not sockets and keeper is None:
        return [*args, "--", *argv]
    inside_py = f"{INSIDE_DIR}/inside.py" + ("c" if INSIDE_SCRIPT.endswith(".pyc") else "")
    args += ["--ro-bind", INSIDE_SCRIPT, inside_py]
    listens: list[str] = []
    for port, sock in sockets.items():
        inside_sock = f"{INSIDE_DIR}/{port}.sock"
        args += ["--bind", str(sock), inside_sock]
        listens += ["--listen", f"{port}={inside_sock}"]
    return [*args, "--", exe, "-I", "-S", inside_py, *(keeper or ()), *listens, "--", *argv]


class GatewayRelay:
    """The outside half of the fence's network: a Unix socket per allowed port, piped to ``127.0.0.1:port``.

    A context manager (``with GatewayRelay(port) as relay``); :meth:`socket` names the socket to bind."""

    def __init__(self, ports: int | Iterable[int], host: str = "127.0.0.1") -> None:
        self.ports = [ports] if isinstance(ports, int) else list(ports)
        self.host = host
        self._dir: Path | None = None
        self._relays: dict[int, UnixToTcpRelay] = {}

    def start(self) -> GatewayRelay:
        self._dir = Path(tempfile.mkdtemp(prefix="assay-fence-"))
        try:
            for port in self.ports:
                relay = UnixToTcpRelay(port, self._dir / f"{port}.sock", self.host)
                self._relays[port] = relay.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for relay in self._relays.values():
            relay.stop()
        self._relays.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def socket(self, port: int) -> Path:
        if port not in self._relays:
            raise ConfigError(f"fence: port {port} is not relayed (relayed: {sorted(self._relays)})")
        return self._relays[port].socket_path

    def __enter__(self) -> GatewayRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_SHARED: dict[int, GatewayRelay] = {}


def shared_relay(port: int) -> GatewayRelay:
    """A relay for ``port`` that lives as long as this process (started on first use)."""
    if port not in _SHARED:
        _SHARED[port] = GatewayRelay(port).start()
        if len(_SHARED) == 1:
            atexit.register(lambda: [r.stop() for r in _SHARED.values()])
    return _SHARED[port]


def _sockets_for(ports: list[int], relay: GatewayRelay | Mapping[int, Path] | None) -> dict[int, Path]:
    sockets: dict[int, Path] = {}
    for port in ports:
        if isinstance(relay, GatewayRelay):
            sockets[port] = relay.socket(port)
        elif relay is not None:
            if port not in relay:
                raise ConfigError(f"fence: no relay socket for port {port}")
            sockets[port] = Path(relay[port])
        else:
            sockets[port] = shared_relay(port).socket(port)
    return sockets


def route_ports(route: Route | None) -> list[int]:
    """The loopback ports of the route's gateway URLs (ConfigError for a URL that is not on loopback)."""
    ports: list[int] = []
    for url in (route.openai_base_url, route.anthropic_base_url) if route else ():
        if not url:
            continue
        parts = urlsplit(url)
        if parts.hostname not in ("127.0.0.1", "localhost") or parts.port is None:
            raise ConfigError(f"--fence: the model route {url} is not a loopback gateway (127.0.0.1:PORT)")
        if parts.port not in ports:
            ports.append(parts.port)
    return ports


def _url_ports(urls: Iterable[str]) -> list[int]:
    ports = []
    for url in urls:
        parts = urlsplit(url)
        if parts.hostname not in ("127.0.0.1", "localhost") or parts.port is None:
            raise ConfigError(f"--fence: {url} is not a loopback server (127.0.0.1:PORT)")
        ports.append(parts.port)
    return list(dict.fromkeys(ports))


def _venv_root(path: Path) -> Path:
    """A venv's ``bin`` folder needs its venv bound (``pyvenv.cfg`` and ``lib`` are beside it)."""
    return path.parent if (path.parent / "pyvenv.cfg").is_file() else path


def fence_argv(
    spec: RunSpec,
    argv: Sequence[str],
    route: Route | None = None,
    *,
    env: Mapping[str, str] | None = None,
    toolchain: Iterable[Path | str] = (),
    hide: Iterable[Path | str] = (),
    binds_ro: Iterable[Path | str] = (),
    binds_rw: Iterable[Path | str] = (),
    home: Path | str | None = None,
    report: bool = True,
    urls: Iterable[str] = (),
) -> list[str]:
    """For harnesses that run a subprocess: ``argv`` unchanged when ``spec.fence`` is off, else fenced.

    The route's gateway port(s) are the only network; ``toolchain`` folders are bound read-only and, when
    ``env`` is not given, put first on PATH; ``binds_ro``/``binds_rw`` bind more (the agent's own install, the
    ``gh`` stand-in's fixtures and log); ``home`` keeps HOME between turns (Claude Code's sessions live there:
    without it HOME is fresh on every call). ``urls``: more loopback servers the agent may reach (the
    scenario's world over MCP), their ports relayed like the gateway's. Inside, ``spec.limits`` hold the agent's tree (``report``: on the
    pipe :func:`assay.agents._cliproc.run_streaming` opens). Refuses with ConfigError (one line) where bubblewrap
    cannot run."""
    if not spec.fence:
        return list(argv)
    route = route or spec.route
    from assay.agents._env import agent_env

    # the run's own toolchain (RunSpec.toolchain, where the contract has it) is bound like the harness's
    toolchain = [*getattr(spec, "toolchain", ()), *toolchain]
    if env is None:
        env = agent_env(route=route, toolchain=toolchain, extra=spec.env)
    from assay.agents._shims import shim_roots

    return fenced_command(
        argv,
        spec.workdir,
        allow_port=[*route_ports(route), *(p for p in _url_ports(urls) if p not in route_ports(route))],
        hide=hide,
        # the shim folders on the agent's PATH work only with their manager's root visible (read-only)
        binds_ro=[*(_venv_root(Path(t)) for t in toolchain), *shim_roots(env.get("PATH")), *binds_ro],
        binds_rw=[*spec.writable, *binds_rw],
        env=env,
        home=home,
        keeper=keeper_options(spec.limits, spec.workdir, report=report),
    )
