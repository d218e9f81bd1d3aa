"""The whole suite runs with an assay home of its own (``$ASSAY_HOME``), made empty for the session and removed
after it: tests never write into the user's ``~/.assay`` (its keys, code indexes, fetched repositories) and never
meet the machine's eval lock held by an eval the user is running. A test that needs its own home still sets one."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_HOME_KEY = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    home = Path(tempfile.mkdtemp(prefix="assay-tests-home-"))
    os.environ["ASSAY_HOME"] = str(home)
    config.stash[_HOME_KEY] = home


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HOME_KEY, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)
