"""Offline OCR of PDF pages: the page rasterised by poppler's ``pdftoppm``, read by ``tesseract``.

Both are Debian programs (``apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils``) run through
their command lines, so OCR adds no Python dependency. The page is rasterised, not its embedded images
taken out, so every image encoding a scanner writes (JBIG2, CCITT, JPEG, masks, rotations) reads alike.

:func:`check_ocr` reads a shipped image with known words before any page is trusted to OCR: a missing
program, missing language data or a wrong reading stops with an error instead of indexing every image
page as blank. Its result is kept for the process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from assay.errors import ConfigError, DocumentError

__all__ = ["CHECK_WORDS", "OCR_DPI", "OCR_LANGUAGE", "check_ocr", "ocr_image", "ocr_pdf_pages"]

OCR_LANGUAGE = "eng"
OCR_DPI = 300
#: what the shipped check image says (tests/fixtures/rag/make-ocr-check.py draws it)
CHECK_WORDS = "assay ocr check: harbour lantern 4815"
_CHECK_IMAGE = Path(__file__).resolve().parents[1] / "data" / "ocr" / "ocr-check.png"
_INSTALL = "apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils"
_TIMEOUT_S = 120


def _program(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ConfigError(f"OCR is on but `{name}` is not installed ({_INSTALL}), or turn OCR off")
    return found


def ocr_image(image: Path, language: str = OCR_LANGUAGE) -> str:
    """The text tesseract reads in one image file."""
    cmd = [_program("tesseract"), str(image), "stdout", "-l", language, "--psm", "3"]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}  # pages run in parallel, one thread each
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False, env=env)
    except subprocess.TimeoutExpired as exc:
        raise DocumentError(f"OCR timed out after {_TIMEOUT_S} s", path=str(image)) from exc
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-3:]
        raise ConfigError(f"tesseract failed (exit {done.returncode}): {' | '.join(tail)} ({_INSTALL})")
    return done.stdout


@cache
def check_ocr(language: str = OCR_LANGUAGE) -> str:
    """Read the shipped check image; raise ConfigError unless every known word comes back."""
    got = ocr_image(_CHECK_IMAGE, language)
    missing = [w for w in CHECK_WORDS.lower().split() if w not in got.lower().split()]
    if missing:
        raise ConfigError(
            f"OCR self-check failed: tesseract read {got.strip()[:80]!r} from {_CHECK_IMAGE.name}, "
            f"missing {' '.join(missing)!r}; check the {language!r} language data ({_INSTALL})"
        )
    return got


def ocr_pdf_pages(data: bytes, numbers: list[int], *, name: str, dpi: int = OCR_DPI) -> dict[int, str]:
    """Rasterise pages ``numbers`` (1-based) of a PDF and return what OCR reads on each, pages read in
    parallel (one per core)."""
    check_ocr()
    pdftoppm = _program("pdftoppm")
    with tempfile.TemporaryDirectory(prefix="assay-ocr-") as tmp:
        src = Path(tmp) / "in.pdf"
        src.write_bytes(data)

        def read(number: int) -> str:
            out = Path(tmp) / f"p{number}"
            cmd = [pdftoppm, "-f", str(number), "-l", str(number), "-r", str(dpi), "-gray", "-png",
                   str(src), str(out)]  # fmt: skip
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
            except subprocess.TimeoutExpired as exc:
                raise DocumentError(f"page {number}: rasterising for OCR timed out", path=name) from exc
            images = sorted(Path(tmp).glob(f"p{number}-*.png"))
            if done.returncode != 0 or not images:
                why = (done.stderr or "").strip()[:200]
                raise DocumentError(
                    f"page {number}: pdftoppm could not rasterise it for OCR: {why}", path=name
                )
            return ocr_image(images[0])

        workers = max(1, min(len(numbers), os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return dict(zip(numbers, pool.map(read, numbers), strict=True))
