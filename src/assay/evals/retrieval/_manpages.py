"""A BEIR-format retrieval set built from real text: the Linux manual pages (``man-pages``).

Source: Debian's ``manpages-dev`` and ``manpages`` packages (the Linux man-pages project, sections 1 to 8),
pinned by version and sha256 (:data:`MANPAGES_DEBS`); ``apt-get download`` fetches them once into
``.cache/manpages/``. Each page that is not a link (``.so``) gives:

- a **document**: its DESCRIPTION section as plain text (roff requests and escapes removed), cut at a
  paragraph boundary after :data:`DOC_CHARS` characters so the set stays cheap to embed;
- a **query**: its NAME line's description, the words after ``\\-``, so without the names the page
  documents ("strtok, strtok_r \\- extract tokens from strings" asks "extract tokens from strings").

Pages whose descriptions read the same share one query, relevant (grade 1) to each of them. Queries are
split into ``dev`` and ``test`` by a digest of their id, so anything tuned on the set (fusion weights) is
tuned on ``dev`` and reported on ``test``. The build is deterministic: the same ``.deb`` gives the same
bytes. Build it with::

    python benchmarks/build_man_pages.py     # fetches the pinned .debs, writes .cache/manpages/man-pages
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, DataIntegrityError

__all__ = [
    "DOC_CHARS",
    "MANPAGES_DEBS",
    "ManPage",
    "build_beir",
    "fetch_deb",
    "pages_from_deb",
    "pages_from_folder",
    "parse_page",
]


@dataclass(frozen=True)
class DebPin:
    package: str
    version: str
    sha256: str
    size_bytes: int
    licence: str


#: the pinned sources of the ``man-pages`` set: the Linux man-pages project's pages as Debian ships them
MANPAGES_DEBS = (
    DebPin(
        package="manpages-dev",  # sections 2 and 3: system calls and the C library
        version="6.03-2",
        sha256="96f55cb5e26231d5567c89b692bced63825a14a2d5bd18fdf16ea2ed44eb9838",
        size_bytes=2030264,
        licence="per page: Linux-man-pages-copyleft, GPL-2.0+/1.0+, BSD-3/4-Clause (SPDX line in each page)",
    ),
    DebPin(
        package="manpages",  # sections 1, 4, 5, 7, 8: devices, file formats, overviews
        version="6.03-2",
        sha256="efa1ba4cd19ad7baeae959c9209a7eb74be2ebb858bcabb412597bfc9f588c91",
        size_bytes=1331652,
        licence="per page, as manpages-dev",
    ),
)
#: documents are cut at the first paragraph end past this many characters
DOC_CHARS = 1500


@dataclass(frozen=True)
class ManPage:
    id: str  # "strtok.3"
    names: tuple[str, ...]
    summary: str  # the NAME line's description
    description: str  # DESCRIPTION as plain text, paragraphs separated by blank lines
    licence: str


# ------------------------------------------------------------------------------------------ roff

_ESCAPES = {
    "-": "-", "e": "\\", "&": "", "~": " ", " ": " ", "%": "", ":": "", "|": "", "^": "", "0": " ",
    "c": "", "/": "", ",": "", "'": "'", "`": "`", ".": ".",
}  # fmt: skip
_NAMED = {"em": "-", "en": "-", "aq": "'", "dq": '"', "lq": '"', "rq": '"', "oq": "'", "cq": "'",
          "bu": "*", "mu": "x", "co": "(c)", "rg": "(R)", "ti": "~", "ha": "^", "lh": "", "rh": "",
          "Fo": "<<", "Fc": ">>", "fo": "<", "fc": ">", "ga": "`", "aa": "'", "at": "@", "sh": "#",
          "rs": "\\", "tm": "(TM)", "de": " degrees", "+-": "+/-", "<=": "<=", ">=": ">=", "!=": "!=",
          "->": "->", "<-": "<-", "==": "==", "pl": "+", "mi": "-", "eq": "=", "sl": "/", "ul": "_",
          "br": "|", "or": "|", "ba": "|", "ct": "c", "Po": "L", "Eu": "EUR", "u2014": "-"}  # fmt: skip
_ESC = re.compile(
    r"\\(f(?:\[[^\]]*\]|\(..|.)|\((..)|\[([^\]]*)\]|\*(?:\[[^\]]*\]|\(..|.)|[sv]'[^']*'|s[-+]?\d|.)"
)
_FONT_PAIRS = {"BR", "BI", "IB", "IR", "RB", "RI"}
_SKIP_REQ = {"TH", "PD", "ad", "na", "hy", "nh", "ft", "ps", "vs", "ne", "ta", "ll", "ti", "in", "so", "ds",
             "de", "ig", "nr", "ie", "el", "if", "tr", "ce", "HP", "UE", "ME", "YS", "SY", "OP", "ns",
             "sp", "br", "RS", "RE", "nf", "fi", "EX", "EE", "TS", "TE", "T{", "T}", "ss", "cs", "\\\""}  # fmt: skip
_BREAK_REQ = {"PP", "P", "LP", "TP", "IP", "TQ", "SS", "sp", "br", "RS", "RE", "nf", "fi", "EX", "EE"}


def _unescape(text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        tok = m.group(1)
        if tok[0] in "f*sv":
            return ""
        name = m.group(2) or m.group(3)
        if name is not None:
            return _NAMED.get(name, "")
        return _ESCAPES.get(tok, tok)

    return _ESC.sub(sub, text)


def _args(rest: str) -> list[str]:
    """Macro arguments: blank-separated, double quotes group (``""`` inside is a quote)."""
    out, cur, quoted, i, started = [], [], False, 0, False
    while i < len(rest):
        ch = rest[i]
        if quoted:
            if ch == '"':
                if rest[i + 1 : i + 2] == '"':
                    cur.append('"')
                    i += 1
                else:
                    quoted = False
            else:
                cur.append(ch)
        elif ch == '"':
            quoted, started = True, True
        elif ch in " \t":
            if started:
                out.append("".join(cur))
                cur, started = [], False
        else:
            cur.append(ch)
            started = True
        i += 1
    if started:
        out.append("".join(cur))
    return out


def _sections(source: str) -> dict[str, list[str]]:
    """Section name -> its plain-text lines (``""`` marks a paragraph break)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_table = False
    for raw in source.splitlines():
        line = raw.rstrip()
        if line.startswith(('.\\"', "'\\\"", '\\"')) or line in (".", "'"):
            continue
        if line.startswith((".", "'")):
            req, _, rest = line[1:].lstrip().partition(" ")
            if req == "SH":
                current = out.setdefault(" ".join(_args(rest)).upper(), [])
                continue
            if req == "TS":
                in_table = True
            elif req == "TE":
                in_table = False
            if current is None:
                continue
            if req in _BREAK_REQ:
                current.append("")
            if req in ("B", "I", "SM", "SB", "SS", "IP", "TP", "UR", "MT"):
                text = " ".join(_args(rest)[:1] if req == "IP" else _args(rest))
            elif req in _FONT_PAIRS:
                text = "".join(_args(rest))
            else:
                continue
            if text:
                current.append(_unescape(text))
            continue
        if current is None:
            continue
        if in_table:
            if re.fullmatch(r"[a-zA-Z0-9 |.,;_()]*\.?", line) and not re.search(r"[a-z]{4}", line):
                continue  # a format line of the table
            line = line.replace("\t", " ").replace("T{", "").replace("T}", "")
        current.append(_unescape(line))
    return out


def _paragraphs(lines: list[str]) -> list[str]:
    paras, cur = [], []
    for line in [*lines, ""]:
        if line.strip():
            cur.append(line.strip())
        elif cur:
            paras.append(re.sub(r"\s+", " ", " ".join(cur)).strip())
            cur = []
    return [p for p in paras if p]


def parse_page(page_id: str, source: str) -> ManPage | None:
    """The page's names, summary and DESCRIPTION text; ``None`` for a link or a page lacking either."""
    if source.lstrip().startswith(".so "):
        return None
    m = re.search(r"SPDX-License-Identifier:\s*(\S+)", source)
    sections = _sections(source)
    name = " ".join(_paragraphs(sections.get("NAME", [])))
    desc = _paragraphs(sections.get("DESCRIPTION", []))
    if " - " not in name or not desc:
        return None
    left, _, summary = name.partition(" - ")
    names = tuple(n.strip() for n in left.split(",") if n.strip())
    return ManPage(page_id, names, summary.strip(), "\n\n".join(desc), m.group(1) if m else "unknown")


def _query_text(page: ManPage) -> str:
    """The summary less any reference to the page's own functions (``glob()``). A name that is also the
    summary's verb or noun (``sleep`` in "sleep for a specified number of seconds") stays: it is English."""
    words = [w for w in page.summary.split() if not (w.endswith("()") and w[:-2] in page.names)]
    return " ".join(words).strip(" ,;:\\")


def _document_text(page: ManPage) -> str:
    out = ""
    for para in page.description.split("\n\n"):
        out = f"{out}\n\n{para}" if out else para
        if len(out) >= DOC_CHARS:
            break
    return out


# ------------------------------------------------------------------------------------- sources


def pages_from_folder(folder: Path) -> list[ManPage]:
    """Pages under ``folder`` (``man2/open.2``, ``man3/strtok.3.gz``, ...), in section then name order."""
    out = []
    for sub in sorted(d for d in folder.glob("man*") if d.is_dir()):
        for path in sorted(sub.iterdir()):
            if path.is_symlink():
                continue
            raw = path.read_bytes()
            if path.suffix == ".gz":
                raw = gzip.decompress(raw)
            page = parse_page(path.name.removesuffix(".gz"), raw.decode("utf-8", errors="replace"))
            if page is not None:
                out.append(page)
    return out


def _deb_data(deb: Path) -> tarfile.TarFile:
    """The ``data.tar.*`` member of a Debian archive (an ``ar`` file), opened."""
    import io

    blob = deb.read_bytes()
    if not blob.startswith(b"!<arch>\n"):
        raise DataIntegrityError(f"{deb}: not a Debian package (no ar header)")
    pos = 8
    while pos + 60 <= len(blob):
        header = blob[pos : pos + 60]
        name = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        body = blob[pos + 60 : pos + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
        pos += 60 + size + (size & 1)
    raise DataIntegrityError(f"{deb}: no data.tar member")


def pages_from_deb(deb: Path) -> list[ManPage]:
    """The English pages in a Debian man-page package, in path order (links skipped)."""
    out = []
    with _deb_data(deb) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and _PAGE.fullmatch(m.name)]
        for m in sorted(members, key=lambda m: m.name):
            f = tar.extractfile(m)
            assert f is not None
            raw = gzip.decompress(f.read()) if m.name.endswith(".gz") else f.read()
            page = parse_page(
                m.name.rsplit("/", 1)[1].removesuffix(".gz"), raw.decode("utf-8", errors="replace")
            )
            if page is not None:
                out.append(page)
    return out


_PAGE = re.compile(r"\./usr/share/man/man\w+/[^/]+")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_deb(folder: Path, pin: DebPin) -> Path:
    """The pinned ``.deb`` in ``folder``, fetched with ``apt-get download`` when absent; checked by sha256."""
    folder.mkdir(parents=True, exist_ok=True)
    deb = folder / f"{pin.package}_{pin.version}_all.deb"
    if not deb.exists():
        try:
            subprocess.run(
                ["apt-get", "download", f"{pin.package}={pin.version}"],
                cwd=folder, check=True, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
        except FileNotFoundError:
            raise ConfigError(f"{deb} is missing and apt-get is not here to download it") from None
        except subprocess.CalledProcessError as exc:
            last = (exc.stderr or "").strip().splitlines()[-1:] or ["no output"]
            raise ConfigError(f"apt-get download {pin.package}={pin.version} failed: {last[0]}") from None
    sha = _sha256(deb)
    if sha != pin.sha256:
        raise DataIntegrityError(
            f"{deb} has sha256 {sha} but the man-pages set pins {pin.sha256} ({pin.package} {pin.version}). "
            "Not using it: delete the file to fetch again, or review the new version and update the pin"
        )
    return deb


# --------------------------------------------------------------------------------------- build


def _split(qid: str) -> str:
    return "dev" if hashlib.sha256(qid.encode()).digest()[0] < 128 else "test"


def build_beir(pages: list[ManPage], out: Path, *, source: str) -> dict[str, int]:
    """Write ``pages`` as a BEIR folder (corpus, queries, ``qrels/dev.tsv`` and ``qrels/test.tsv``).

    Returns counts (documents, queries per split). ``source`` goes into ``source.json``.
    """
    corpus, by_query = [], {}
    for p in pages:
        corpus.append({"_id": p.id, "title": "", "text": _document_text(p)})
        query = _query_text(p)
        if len(query.split()) >= 2:  # a one-word summary ("(unimplemented)") asks nothing
            by_query.setdefault(query.lower(), (query, []))[1].append(p.id)
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    queries, qrels = [], {"dev": [], "test": []}
    for text, docs in sorted(by_query.values(), key=lambda v: v[1][0]):
        qid = f"q-{docs[0]}"  # named by its first page: adding a page elsewhere moves no query's split
        queries.append({"_id": qid, "text": text})
        qrels[_split(qid)] += [f"{qid}\t{d}\t1" for d in docs]
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in corpus)
    with (out / "queries.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in queries)
    for split, rows in qrels.items():
        (out / "qrels" / f"{split}.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(r + "\n" for r in rows)
        )
    counts = {
        "documents": len(corpus),
        "dev_queries": len({r.split("\t")[0] for r in qrels["dev"]}),
        "test_queries": len({r.split("\t")[0] for r in qrels["test"]}),
    }
    (out / "source.json").write_text(
        json.dumps({"source": source, **counts}, indent=2, sort_keys=True) + "\n"
    )
    return counts
