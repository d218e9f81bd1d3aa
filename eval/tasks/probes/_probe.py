"""Shared by the probes: run inside a copy of the finished project (cwd), exit 1 with a reason on failure."""

import json
import os
import sys


def fail(reason):
    print("FAIL:", reason)
    sys.exit(1)


def ok(message):
    print("OK:", message)
    sys.exit(0)


def facts():
    return json.loads(os.environ.get("TASK_FACTS") or "{}")


def expect_raises(fn, *args, exc=ValueError, what=""):
    try:
        fn(*args)
    except exc:
        return
    except Exception as other:  # noqa: BLE001 - any other error is the finding
        fail(f"{what or fn.__name__}{args!r} raised {type(other).__name__}: {other}, not {exc.__name__}")
    fail(f"{what or fn.__name__}{args!r} did not raise {exc.__name__}")
