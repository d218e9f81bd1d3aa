"""Normalisation after extraction: ligatures, split words, whitespace, and spans back to the extracted text."""

from __future__ import annotations

from pathlib import Path

from assay.embed import HashEmbedder
from assay.rag import DocumentIndex, chunk_document, extract, extract_bytes
from assay.rag.normalize import normalize

PAPER = Path(__file__).resolve().parents[2] / "fixtures" / "rag" / "latex" / "paper.pdf"


def test_nfkc_turns_ligatures_and_compatibility_forms_into_letters() -> None:
    got = normalize("The \ufb01lled De\ufb01nitions of \uff21\uff22 in the o\ufb03ce,\u00a0soft\u00adware.\n")
    assert got.text == "The filled Definitions of AB in the office, software.\n"
    # Arabic presentation forms (what many PDFs of Arabic text hold) become the letters a query types
    assert normalize("\ufee3\ufeae\ufea3\ufe92\ufe8e\n").text == "\u0645\u0631\u062d\u0628\u0627\n"


def test_split_words_join_only_where_the_joined_word_is_more_plausible() -> None:
    text = (
        "Lorem ipsum consectetur adip-\niscing elit. A well-\nknown fact; it is well-known.\n"
        "The data-\nbase holds the database. Fast and well tested, it is known.\n"
        "Pre- and post-processing. Also adip- iscing. See the next-\nPage.\n"
    )
    got = normalize(text).text
    assert "adipiscing elit" in got  # fragments, not words: joined
    assert "well-known fact" in got  # the hyphenated form occurs elsewhere: hyphen kept, break gone
    assert "The database holds" in got  # the joined word occurs elsewhere
    assert "Pre- and post-processing" in got  # a hyphen before a space with real words on both sides
    assert "Also adipiscing." in got  # same line, both parts fragments: joined
    assert "next-\nPage" in got  # a capital starts something new: left alone


def test_both_parts_words_elsewhere_keep_the_hyphen() -> None:
    got = normalize("It is well known. The rule is self-\nevident and self evident.\n").text
    assert "self-evident and" in got


def test_whitespace_is_repaired_and_paragraphs_kept() -> None:
    got = normalize("  one \t two   three  \n\n\n\n four\n").text
    assert got == "one two three\n\nfour\n"


def test_every_normalised_character_maps_back_to_the_extracted_text() -> None:
    text = "The \ufb01lled tank.  Lorem adip-\niscing elit.\n"
    got = normalize(text)
    i = got.text.index("filled")
    assert text[slice(*got.source_span(i, i + len("filled")))] == "\ufb01lled"
    i = got.text.index("adipiscing")
    assert text[slice(*got.source_span(i, i + len("adipiscing")))] == "adip-\niscing"


def test_latex_paper_ligature_words_are_found_by_bm25_and_split_words_joined() -> None:
    doc = extract(PAPER)
    assert "\ufb01lled" in doc.text and "De\ufb01nitions" in doc.text  # what LuaLaTeX's text layer holds
    assert "spill-\nway" in doc.text and "hydro-\nelectric" in doc.text
    idx = DocumentIndex(HashEmbedder(), cache_dir=None)
    idx.index_document(PAPER, "paper")
    joined = " ".join(c.text for c in idx.chunks("paper"))
    for word in ("spillway", "hydroelectric", "interdisciplinary", "configuration", "well-known"):
        assert word in joined.lower(), word
    assert "\ufb01" not in joined and "spill-" not in joined
    for query, word in (("filled", "filled"), ("definitions", "definitions"), ("office", "office")):
        hits = idx.search(query, k=1, mode="bm25")
        assert hits and word in hits[0].chunk.text.lower(), query
    hits = idx.search("spillway crest", k=1, mode="bm25")
    assert hits and "spillway crest" in hits[0].chunk.text


def test_a_quote_in_a_normalised_chunk_maps_to_its_span_of_the_original() -> None:
    doc = extract(PAPER)
    chunks = chunk_document("paper", doc)
    quote = "The definitions below follow the configuration"
    chunk = next(c for c in chunks if quote in c.text)
    original = doc.text[chunk.start : chunk.end]
    assert "The de\ufb01nitions below follow the con\ufb01g-\nuration" in original
    assert normalize(original).text.strip() == chunk.text.strip()
    assert chunk.page == 1


def test_markdown_is_normalised_too() -> None:
    doc = extract_bytes("# O\ufb03ce hours\n\nThe o\ufb03ce opens   at nine.\n".encode(), "markdown")
    (chunk,) = chunk_document("md", doc)
    assert chunk.heading == "Office hours" and "The office opens at nine." in chunk.text


def test_a_labelled_quote_typed_plainly_is_placed_in_the_ligature_pdf_and_hit(tmp_path: Path) -> None:
    import json
    import shutil

    from assay.evals.retrieval._rag_data import load_dataset, verify_labels
    from assay.evals.retrieval._rag_score import first_hit_rank

    shutil.copy(PAPER, tmp_path / "paper.pdf")
    quote = "The definitions below follow the configuration used by the regional authority"
    (tmp_path / "dataset.json").write_text(
        json.dumps({
            "name": "paper", "version": "1", "description": "",
            "documents": [{"id": "paper", "path": "paper.pdf"}],
            "questions": [{"id": "q", "question": "Whose configuration do the definitions follow?",
                           "answer": "the regional authority", "type": "exact",
                           "evidence": [{"doc": "paper", "quote": quote, "page": 1}]}],
        })
    )  # fmt: skip
    data = load_dataset(tmp_path / "dataset.json")
    extracted = verify_labels(data)
    (evidence,) = data.questions[0].evidence
    assert evidence.span is not None
    placed = extracted["paper"].text[slice(*evidence.span)]
    assert (
        placed.startswith("The de\ufb01nitions")
        and "con\ufb01g-\nuration used by the regional authority" in placed
    )
    idx = DocumentIndex(HashEmbedder(), cache_dir=None)
    idx.index_document(tmp_path / "paper.pdf", "paper")
    assert first_hit_rank([h.chunk for h in idx.search(data.questions[0].question, k=5)], data.questions[0])


def test_text_that_needs_no_repair_maps_to_itself() -> None:
    text = "Plain line one.\n\nLine two, with a well-known word and \u00e9t\u00e9.\n"
    got = normalize(text)
    assert got.text == text
    assert got.starts == list(range(len(text))) and got.ends == list(range(1, len(text) + 1))
    mixed = "keep  this\tline\n  and this one  \n"  # folded lines beside plain ones keep their map
    got = normalize(mixed)
    assert got.text == "keep this line\nand this one\n"
    assert [mixed[a:b] for a, b in zip(got.starts, got.ends, strict=True)] == list(
        "keep this\tline\nand this one\n"
    )
