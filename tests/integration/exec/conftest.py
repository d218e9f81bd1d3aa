"""A local Ray head on loopback, started once per test module, and the scripted subjects on its path."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # `ray_subjects` by the same name here and on the workers
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="module")
def ray_head() -> Iterator[object]:
    """``ray.init(address="local")`` with two CPUs and a private temp dir; shut down after the module."""
    import ray  # the test extra installs it: a missing one fails here, it is never skipped

    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), old) if p)  # the workers inherit it
    temp = tempfile.mkdtemp(prefix="assay-ray-test-")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        _temp_dir=temp,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
