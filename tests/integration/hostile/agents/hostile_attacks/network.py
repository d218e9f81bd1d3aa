"""Reach the network: a listener on this machine's own non-loopback address, and a loopback port that is not
the model gateway's."""

from __future__ import annotations

import socket
from pathlib import Path


def run(params: dict, workdir: Path) -> str:
    lines = []
    for host in params["hosts"]:
        try:
            with socket.create_connection((host, params["port"]), timeout=2) as s:
                s.sendall(params["marker"].encode() + b"\n")
            lines.append(f"GOT a connection to {host}:{params['port']}")
        except OSError as exc:
            lines.append(f"DENIED {host}:{params['port']}: {exc}")
    return "\n".join(lines)
