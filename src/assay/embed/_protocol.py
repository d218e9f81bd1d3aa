"""The embedder protocol every index and store uses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    ``id`` is stable across processes and machines for the same weights and settings; indexes record it
    and refuse to be searched with an embedder of another id.
    """

    name: str
    dim: int
    max_tokens: int

    @property
    def id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...
