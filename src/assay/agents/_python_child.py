"""The child process a ``python`` harness agent runs in: ``python -m assay.agents._python_child REQUEST RESULT``.

The parent (:mod:`assay.agents._python`) writes REQUEST (a pickle: the target ``pkg.module:fn`` and the
keyword arguments the agent asked for) and starts this module with the agent's scrubbed environment, plus
``PYTHONPATH`` holding the parent's ``sys.path`` (taken out of the environment again before the agent runs, as
the agent's own commands get none); the agent's return value, read as a record by :func:`~assay.agents._python.to_result`, is
written to RESULT as JSON (``{"result": AgentResult}`` or ``{"error": "..."}``). Only this process ever holds
the agent's code running; the eval's environment (and its provider keys) is not in it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import pickle
import sys
import traceback
from pathlib import Path
from typing import Any


def _call(target: str, kwargs: dict[str, Any]) -> Any:
    from assay.agents._python import load_callable

    fn = load_callable(target)
    value = fn(**kwargs)
    if inspect.isawaitable(value):
        value = asyncio.run(_awaited(value))
    return value


async def _awaited(value: Any) -> Any:
    return await value


def main(argv: list[str]) -> int:
    request_path, result_path = Path(argv[0]), Path(argv[1])
    request = pickle.loads(request_path.read_bytes())  # written by the parent, which is trusted
    request_path.unlink(missing_ok=True)
    os.environ.pop("PYTHONPATH", None)
    from assay.agents._python import to_result

    out: dict[str, Any]
    try:
        value = _call(request["target"], request["kwargs"])
    except BaseException as exc:  # the agent's own failure
        where = traceback.extract_tb(exc.__traceback__)[-1]
        out = {"error": f"{type(exc).__name__}: {exc} (at {where.filename}:{where.lineno})"}
    else:
        try:
            out = {"result": to_result(value, "python").model_dump(mode="json")}
        except ValueError as exc:
            out = {"error": str(exc)}
    result_path.write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
