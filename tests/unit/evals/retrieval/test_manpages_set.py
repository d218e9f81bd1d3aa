"""The man-pages BEIR set (issue 38): built from a slice of real pages, loaded as BEIR, known figures."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from assay.embed import get_embedder
from assay.errors import DataIntegrityError
from assay.evals.retrieval._manpages import (
    MANPAGES_DEBS,
    DebPin,
    build_beir,
    fetch_deb,
    pages_from_deb,
    pages_from_folder,
    parse_page,
)
from assay.evals.retrieval._rag_data import load_beir
from assay.evals.retrieval._rag_fusion import mean_ndcg, ranker_ndcg
from assay.rag import DocumentIndex

SLICE = Path(__file__).resolve().parents[3] / "fixtures" / "manpages"


def _built(tmp_path: Path) -> Path:
    out = tmp_path / "man-slice"
    build_beir(pages_from_folder(SLICE), out, source="tests/fixtures/manpages")
    return out


def test_the_slice_builds_a_beir_folder_with_natural_queries(tmp_path: Path) -> None:
    out = _built(tmp_path)
    dev, test = load_beir(out, "dev"), load_beir(out, "test")
    assert len(dev.corpus) == 21  # console_ioctl.4 is a .so link: no page
    assert (len(dev.qrels), len(test.qrels)) == (12, 8)
    by_text = {test.queries[q]: sorted(r) for q, r in test.qrels.items()} | {
        dev.queries[q]: sorted(r) for q, r in dev.qrels.items()
    }
    assert by_text["extract tokens from strings"] == ["strtok.3"]
    assert by_text["copy memory area"] == ["memcpy.3", "memmove.3"]  # one summary, two pages
    assert by_text["sleep for a specified number of seconds"] == ["sleep.3"]  # an English name stays
    doc = dev.corpus["strtok.3"][1]
    assert doc.startswith("The strtok() function breaks a string into a sequence of zero or more")
    assert "\\f" not in doc and ".BR" not in doc and "\\-" not in doc
    assert not set(dev.qrels) & set(test.qrels)


def test_the_build_is_deterministic(tmp_path: Path) -> None:
    a, b = _built(tmp_path / "a"), _built(tmp_path / "b")
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/dev.tsv", "qrels/test.tsv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_known_figures_on_the_slice(tmp_path: Path) -> None:
    beir = load_beir(_built(tmp_path), "test")
    index = DocumentIndex(get_embedder("hash"), cache_dir=None)
    index.index_texts([(d, text) for d, (_, text) in beir.corpus.items()])
    per_query = ranker_ndcg(index, [(beir.queries[q], beir.qrels[q]) for q in sorted(beir.qrels)])
    got = {m: round(v, 4) for m, v in mean_ndcg(per_query).items()}
    assert got == KNOWN


#: nDCG@10 of the slice's 8 test queries over its 21 pages with the hash embedder (no model needed)
KNOWN = {"bm25": 0.9539, "dense": 0.6628, "hybrid": 0.8616}


def test_a_link_page_and_a_page_without_description_give_nothing() -> None:
    assert parse_page("x.3", ".so man3/strtok.3\n") is None
    assert parse_page("x.3", ".TH X 3\n.SH NAME\nx \\- do a thing\n") is None
    page = parse_page("x.3", '.SH NAME\nx, y \\- do a thing\n.SH DESCRIPTION\n.BR x ()\n.I "does" it.\n')
    assert page is not None and page.names == ("x", "y") and page.description == "x() does it."


def _ar(members: dict[str, bytes]) -> bytes:
    out = [b"!<arch>\n"]
    for name, body in members.items():
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode()
        out += [header, body, b"\n" if len(body) % 2 else b""]
    return b"".join(out)


def test_pages_are_read_from_a_debian_package(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in ("strtok.3", "abs.3"):
            body = (SLICE / "man3" / name).read_bytes()
            info = tarfile.TarInfo(f"./usr/share/man/man3/{name}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    deb = tmp_path / "p.deb"
    deb.write_bytes(_ar({"debian-binary": b"2.0\n", "data.tar.gz": buf.getvalue()}))
    assert [p.id for p in pages_from_deb(deb)] == ["abs.3", "strtok.3"]
    (tmp_path / "bad.deb").write_bytes(b"not an archive")
    with pytest.raises(DataIntegrityError, match="not a Debian package"):
        pages_from_deb(tmp_path / "bad.deb")


def test_a_changed_package_is_refused_in_one_line(tmp_path: Path) -> None:
    pin = MANPAGES_DEBS[0]
    deb = tmp_path / f"{pin.package}_{pin.version}_all.deb"
    deb.write_bytes(b"tampered")
    with pytest.raises(DataIntegrityError) as err:
        fetch_deb(tmp_path, pin)
    msg = str(err.value)
    assert "\n" not in msg and hashlib.sha256(b"tampered").hexdigest() in msg and pin.sha256 in msg
    ok = DebPin(pin.package, pin.version, hashlib.sha256(b"tampered").hexdigest(), 8, pin.licence)
    assert fetch_deb(tmp_path, ok) == deb
