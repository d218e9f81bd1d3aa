"""Build the ``man-pages`` BEIR set (issue 38) from the pinned Debian packages, into ``.cache/manpages/``.

    python benchmarks/build_man_pages.py                 # fetch (apt-get download) once, verify, build
    python benchmarks/build_man_pages.py --out DIR

Sources: ``manpages-dev`` and ``manpages`` 6.03-2, each checked against its sha256
(``assay.evals.retrieval._manpages.MANPAGES_DEBS``). The same packages give the same bytes. The set is then
usable anywhere a BEIR folder is: ``assay eval retrieval --component rag --dataset beir:.cache/manpages/man-pages``
(split ``test``; ``dev`` is for tuning).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from assay.evals.retrieval._manpages import MANPAGES_DEBS, build_beir, fetch_deb, pages_from_deb  # noqa: E402

CACHE = ROOT / ".cache" / "manpages"


def build(out: Path | None = None) -> Path:
    """The built set's folder (rebuilt only when its recorded source differs from the pins)."""
    out = out or CACHE / "man-pages"
    source = ", ".join(f"{p.package} {p.version} sha256 {p.sha256}" for p in MANPAGES_DEBS)
    marker = out / "source.json"
    if marker.is_file() and json.loads(marker.read_text()).get("source") == source:
        return out
    pages = [page for pin in MANPAGES_DEBS for page in pages_from_deb(fetch_deb(CACHE, pin))]
    counts = build_beir(pages, out, source=source)
    print(f"built {out}: {counts}", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    print(build(ap.parse_args().out))


if __name__ == "__main__":
    main()
