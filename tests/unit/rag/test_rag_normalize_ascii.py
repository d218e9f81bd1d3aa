"""The ASCII fast path of NFKC normalisation gives exactly what the character-by-character path gives."""

from __future__ import annotations

from pathlib import Path

from assay.evals.retrieval._rag_scale import make_distractors
from assay.rag.normalize import _nfkc, normalize


def test_ascii_text_maps_each_character_to_itself_as_the_general_path_does(tmp_path: Path) -> None:
    texts = [p.read_text() for p in make_distractors(tmp_path, 3)]
    texts += ["adip-\niscing  elit\t\r\nfoo", "", "x", "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"]
    for text in texts:
        fast = _nfkc(text)
        # a precomposed non-ASCII letter at the end sends the whole text down the general path
        slow_text, slow_starts, slow_ends = _nfkc(text + "\u00e9")
        n = len(text)
        assert fast == (slow_text[:n], slow_starts[:n], slow_ends[:n])
        assert normalize(text).text == normalize(text + "\u00e9").text[: len(normalize(text).text)]
