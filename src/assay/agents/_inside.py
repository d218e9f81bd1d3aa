"""What runs between an agent and the wall around it: the limits, the fence's network listener, the reaper.
Standard library only: the same file runs inside the fence, where assay and its dependencies are absent.

    python3 -I -S _inside.py --report-fd 3 --max-procs 512 --memory 4294967296 --disk 2147483648 \\
        --disk-dir /work/t1 [--listen 8080=/run/assay-fence/8080.sock] -- agent args...

It makes itself the child subreaper of everything the agent starts (an orphan, a double-forked daemon, comes
back to it), sets the per-process limits (``RLIMIT_NPROC`` here, inside the sandbox's user namespace, where it
counts this sandbox's processes only; ``RLIMIT_DATA`` at twice the memory cap as a backstop; ``RLIMIT_FSIZE``
at the disk cap; no core files), listens on ``127.0.0.1:PORT`` for each ``--listen`` and pipes every
connection to the Unix socket bound in (the gateway, outside), starts the agent, and watches its whole tree:
processes, resident memory, bytes added under ``--disk-dir``. Over a limit it kills the tree and says which.
When the agent's main process exits, what it left running gets SIGTERM, then SIGKILL after ``--grace``
seconds. What happened is one JSON object on the report fd (the agent never inherits it); the exit status is
the agent's (128+N for a signal).
"""

from __future__ import annotations

import _signal as signal  # the module without its enums: a few ms less to start the agent
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    from collections.abc import Iterable
    from typing import Any

_CHUNK = 65536
#: seconds between two looks at the tree, and at least between two walks of the workdir (a walk taking longer
#: is made at most 1/20 of the time)
POLL_S = 0.2
DISK_EVERY_S = 0.5
GRACE_S = 3.0
_PR_SET_CHILD_SUBREAPER = 36


# -- the process tree ------------------------------------------------------------------------------------------


def processes() -> dict[int, tuple[int, str, int, str]]:
    """pid -> (ppid, name, resident bytes, state) for every process this /proc shows."""
    page = os.sysconf("SC_PAGE_SIZE")
    found: dict[int, tuple[int, str, int, str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        name_end = stat.rfind(")")
        fields = stat[name_end + 2 :].split()
        if len(fields) < 22:
            continue
        name = stat[stat.find("(") + 1 : name_end]
        found[int(entry)] = (int(fields[1]), name, int(fields[21]) * page, fields[0])
    return found


def tree(
    root: int, table: dict[int, tuple[int, str, int, str]] | None = None, *, whole_ns: bool = False
) -> dict[int, tuple[str, int]]:
    """The live descendants of ``root`` (not itself, not zombies): pid -> (name, resident bytes). ``whole_ns``:
    ``root`` is the first process of a PID namespace of its own: every process there but it and init."""
    table = processes() if table is None else table
    if whole_ns:
        return {
            p: (n, r) for p, (_pp, n, r, st) in table.items() if p not in (1, root) and st not in ("Z", "X")
        }
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[int, tuple[str, int]] = {}
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid in out or pid == root:
            continue
        _ppid, name, rss, state = table[pid]
        if state not in ("Z", "X"):
            out[pid] = (name, rss)
        todo.extend(children.get(pid, ()))
    return out


def kill_tree(
    root: int, grace_s: float, skip: Iterable[int] = (), reap: bool = False, whole_ns: bool = False
) -> tuple[list[str], list[str]]:
    """SIGTERM every descendant of ``root`` (but ``skip``), SIGKILL what is left after ``grace_s`` (0: at once).

    Returns (names of the processes found, names of those that needed SIGKILL). ``reap``: collect exited
    children while waiting (the caller is their parent or subreaper)."""
    skipped = set(skip)
    first = {p: v for p, v in tree(root, whole_ns=whole_ns).items() if p not in skipped}
    if not first:
        return [], []
    if grace_s > 0:
        for pid in first:
            _send_signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if reap:
                _reap_any()
            if not [p for p in tree(root, whole_ns=whole_ns) if p not in skipped]:
                return sorted(n for n, _ in first.values()), []
            time.sleep(0.05)
    hard: dict[int, str] = {}
    for _ in range(200):  # a process forking while it is killed: kill again until nothing is left
        left = {p: v for p, v in tree(root, whole_ns=whole_ns).items() if p not in skipped}
        if not left:
            break
        for pid, (name, _rss) in left.items():
            hard.setdefault(pid, name)
            _send_signal(pid, signal.SIGKILL)
        if reap:
            _reap_any()
        time.sleep(0.01)
    names = {**{p: n for p, (n, _) in first.items()}, **hard}
    return sorted(names.values()), sorted(hard.values())


def _send_signal(pid: int, sig: int) -> None:
    try:  # noqa: SIM105 - contextlib is one import more to start the agent behind
        os.kill(pid, sig)
    except OSError:
        pass


def _reap_any() -> list[tuple[int, int]]:
    done = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        done.append((pid, status))
    return done


def disk_bytes(folder: str) -> int:
    """Bytes allocated under ``folder`` (files and folders, links not followed)."""
    total = 0
    todo = [folder]
    while todo:
        current = todo.pop()
        try:
            with os.scandir(current) as it:
                for entry in it:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
        except OSError:
            continue
    return total


# -- the network listener (inside the fence) -------------------------------------------------------------------


def _pipe(src: _socket.socket, dst: _socket.socket, done: Any = None) -> None:
    try:
        while data := src.recv(_CHUNK):
            dst.sendall(data)
    except OSError:
        pass
    try:  # noqa: SIM105
        dst.shutdown(1)  # SHUT_WR: a request/response on one connection completes
    except OSError:
        pass
    if done is not None:
        done.release()


def _serve(conn: _socket.socket, sock_path: str) -> None:
    import _socket
    import _thread

    up = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        up.connect(sock_path)
    except OSError:
        conn.close()
        up.close()
        return
    back = _thread.allocate_lock()
    back.acquire()
    _thread.start_new_thread(_pipe, (up, conn, back))
    _pipe(conn, up)
    back.acquire()  # the other direction is done too
    conn.close()
    up.close()


def _accept(listener: _socket.socket, sock_path: str) -> None:
    import _socket
    import _thread

    while True:
        try:
            fd, _addr = listener._accept()
        except OSError:
            return
        _thread.start_new_thread(_serve, (_socket.socket(fileno=fd), sock_path))


def listen(port: int, sock_path: str) -> None:
    """Pipe every connection to ``127.0.0.1:port`` (and ``[::1]:port``) to the Unix socket ``sock_path``.
    (``_socket`` and ``_thread``, not their wrappers: these start in 1 ms, those in 20.)"""
    import _socket
    import _thread

    for family, host in ((_socket.AF_INET, "127.0.0.1"), (_socket.AF_INET6, "::1")):
        try:
            listener = _socket.socket(family, _socket.SOCK_STREAM)
            listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            listener.bind((host, port))
            listener.listen(64)
        except OSError:
            if family == _socket.AF_INET:
                raise
            continue  # "localhost" may resolve to ::1 first (Node does); no IPv6 loopback is fine
        _thread.start_new_thread(_accept, (listener, sock_path))


# -- the reaper ------------------------------------------------------------------------------------------------


class Options:
    def __init__(self) -> None:
        self.report_fd: int | None = None
        self.max_procs: int | None = None
        self.memory: int | None = None
        self.disk: int | None = None
        self.disk_dir: str | None = None
        self.grace = GRACE_S
        self.poll = POLL_S
        self.listens: list[tuple[int, str]] = []


def parse(argv: list[str]) -> tuple[Options, list[str]]:
    if "--" not in argv:
        raise ValueError("usage: _inside.py [options] -- COMMAND...")
    split = argv.index("--")
    opts, command = argv[:split], argv[split + 1 :]
    o = Options()
    ints = {"--report-fd": "report_fd", "--max-procs": "max_procs", "--memory": "memory", "--disk": "disk"}
    while opts:
        flag, value, *opts = opts if len(opts) >= 2 else [*opts, ""]
        if flag in ints and value.isdigit():
            setattr(o, ints[flag], int(value))
        elif flag == "--report-fd" and value.startswith("@"):
            pass  # the placeholder left unfilled: a caller that runs the command itself reads no report
        elif flag in ("--grace", "--poll"):
            setattr(o, flag[2:], float(value))
        elif flag == "--disk-dir" and value:
            o.disk_dir = value
        elif flag == "--listen" and value.partition("=")[0].isdigit() and value.partition("=")[2]:
            port, _, sock = value.partition("=")
            o.listens.append((int(port), sock))
        else:
            raise ValueError(f"_inside.py: bad option {flag} {value!r}")
    if not command:
        raise ValueError("_inside.py: no command after --")
    return o, command


def _limit(o: Options) -> None:
    import resource

    # backstops past the watched limits (so the watch, which says why, stops the agent first): tasks (threads
    # too) for RLIMIT_NPROC, a process's data for RLIMIT_DATA, one file's size for RLIMIT_FSIZE
    if o.max_procs is not None:
        nproc = max(2 * o.max_procs, o.max_procs + 64)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if o.memory is not None:
        resource.setrlimit(resource.RLIMIT_DATA, (2 * o.memory, 2 * o.memory))
    if o.disk is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (o.disk, o.disk))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _subreaper() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass  # orphans then go to the namespace's init, which ends them with the sandbox


def _mb(n: int) -> str:
    return f"{n / 2**20:.0f} MB"


def _over(o: Options, live: dict[int, tuple[str, int]], disk_added: int | None) -> tuple[str, str] | None:
    if o.max_procs is not None and len(live) > o.max_procs:
        return "processes", f"{len(live)} processes running, over the limit of {o.max_procs}"
    rss = sum(r for _, r in live.values())
    if o.memory is not None and rss > o.memory:
        return "memory", f"{_mb(rss)} resident, over the limit of {_mb(o.memory)}"
    if o.disk is not None and disk_added is not None and disk_added > o.disk:
        return "disk", f"{_mb(disk_added)} written in the workdir, over the limit of {_mb(o.disk)}"
    return None


def run(o: Options, command: list[str]) -> int:
    report: dict[str, object] = {"stopped_by": None, "reason": None, "killed": [], "killed_hard": []}
    me = os.getpid()
    # the first process of a PID namespace of its own (bwrap's command, unshare's child) sees only the agent's
    # processes besides init; elsewhere orphans must come back to it to be seen
    whole_ns = me <= 2 and os.getppid() in (0, 1)
    if not whole_ns:
        _subreaper()
    disk_start = disk_bytes(o.disk_dir) if o.disk is not None and o.disk_dir else None
    # SIGCHLD waits for sigtimedwait in this thread: blocked before any listener thread starts (they inherit it)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    for port, sock in o.listens:
        try:
            listen(port, sock)
        except OSError as exc:  # a port the sandbox may not bind (under 1024): nothing answers there
            print(f"fence: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}", file=sys.stderr)
    _limit(o)
    try:
        child = os.posix_spawnp(
            command[0],
            command,
            dict(os.environ),
            setsigmask=(),
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGTERM, signal.SIGINT),
        )
    except OSError as exc:
        print(f"fence: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
        report["error"] = f"cannot run {command[0]}: {exc.strerror or exc}"
        _send(o, report)
        return 127
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: _forward(child, s))
    status: int | None = None
    peak_procs = peak_rss = 0
    disk_added: int | None = 0 if disk_start is not None else None
    next_walk = time.monotonic()
    watched_out = False
    while status is None:
        signal.sigtimedwait({signal.SIGCHLD}, o.poll)
        for pid, st in _reap_any():
            if pid == child:
                status = st
        if status is not None:
            break
        live = tree(me, whole_ns=whole_ns)
        peak_procs = max(peak_procs, len(live))
        peak_rss = max(peak_rss, sum(r for _, r in live.values()))
        if disk_start is not None and o.disk_dir and time.monotonic() >= next_walk:
            t0 = time.monotonic()
            disk_added = max(disk_bytes(o.disk_dir) - disk_start, 0)
            next_walk = time.monotonic() + max(DISK_EVERY_S, 20 * (time.monotonic() - t0))
        over = _over(o, live, disk_added)
        if over is not None:
            watched_out = True
            report["stopped_by"], report["reason"] = over
            killed, hard = kill_tree(me, 0, reap=True, whole_ns=whole_ns)
            report["killed"], report["killed_hard"] = killed, hard
            for pid, st in _reap_any():
                if pid == child:
                    status = st
            break
    signalled = status is not None and os.WIFSIGNALED(status)
    if report["stopped_by"] is None and signalled and os.WTERMSIG(status) == signal.SIGXFSZ and o.disk:
        report["stopped_by"] = "disk"
        report["reason"] = f"a file grew past the limit of {_mb(o.disk)} (SIGXFSZ)"
    if not watched_out:
        killed, hard = kill_tree(me, o.grace, reap=True, whole_ns=whole_ns)
        report["killed"], report["killed_hard"] = killed, hard
    if disk_start is not None and o.disk_dir:
        disk_added = max(disk_bytes(o.disk_dir) - disk_start, 0)
        if report["stopped_by"] is None and o.disk is not None and disk_added >= o.disk:
            report["stopped_by"] = "disk"  # a file at the size limit: the write past it failed (EFBIG)
            report["reason"] = f"{_mb(disk_added)} written in the workdir, at the limit of {_mb(o.disk)}"
    report |= {"peak_procs": peak_procs, "peak_rss": peak_rss, "disk_added": disk_added}
    _send(o, report)
    if status is None:
        return 137
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _forward(child: int, sig: int) -> None:
    _send_signal(child, sig)


def _send(o: Options, report: dict[str, object]) -> None:
    if o.report_fd is None:
        return
    import json

    try:
        os.write(o.report_fd, json.dumps(report).encode())
        os.close(o.report_fd)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    try:
        o, command = parse(argv)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if o.report_fd is not None:
        try:
            os.set_inheritable(o.report_fd, False)  # the agent never holds it
        except OSError:
            o.report_fd = None
    return run(o, command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
