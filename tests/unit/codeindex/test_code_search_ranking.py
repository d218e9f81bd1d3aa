"""Ranking of the code index: issue-text query weights, files scored over several chunks, the file channel."""

from __future__ import annotations

from pathlib import Path

from assay.codeindex import CodeIndex
from assay.codeindex._query import CODE, LOG, PATH, PROSE, REPEAT_CAP, REPEAT_STEP, parse_query
from assay.codeindex._search import SearchSettings, search
from assay.embed import HashEmbedder

ISSUE = """Rendering fails when the cache is cold.

Traceback (most recent call last):
  File "src/shop/pricing.py", line 42, in apply_discount
    total = compute_total(items)
ValueError: negative total

2024-05-01 12:00:01 INFO worker started cache warmup
Please fix `compute_total` in shop.rules soon.
"""


def test_traceback_path_and_identifiers_outweigh_prose_and_logs() -> None:
    q = parse_query(ISSUE)
    w = q.weights
    assert w["pricing"] == PATH and w["apply_discount"] == CODE  # the frame's file and function
    assert w["compute_total"] >= CODE  # in backticks (and in the frame's code line)
    assert w["rules"] == CODE  # a dotted module name
    assert w["rendering"] == PROSE and w["cold"] == PROSE
    assert w["worker"] == LOG and w["warmup"] == LOG  # only in the pasted log line
    assert w["pricing"] > w["rendering"] > w["worker"]
    assert "worker started" not in q.dense_text and "Rendering fails" in q.dense_text


def test_identifier_parts_count_less_than_the_whole_name() -> None:
    w = parse_query("Calling `get_help_record` returns None").weights
    assert w["get_help_record"] == CODE
    assert PROSE <= w["help"] < w["get_help_record"]


def test_a_repeated_term_counts_more_up_to_a_cap() -> None:
    assert parse_query("cache").weights["cache"] == PROSE
    assert parse_query("cache cache").weights["cache"] == PROSE + REPEAT_STEP
    assert parse_query("cache " * 10).weights["cache"] == REPEAT_CAP * PROSE


def test_builtin_exception_names_stay_prose_and_project_ones_count_as_code() -> None:
    w = parse_query("AttributeError when TemplateSyntaxError is raised").weights
    assert w["attributeerror"] == PROSE and w["templatesyntaxerror"] == CODE


def test_paths_are_told_from_dotted_names_and_slashed_prose() -> None:
    w = parse_query("click.echo fails on input/output in src/click/utils.py or termui.py").weights
    assert w["echo"] == CODE  # a dotted name keeps both parts (no file extension `.echo`)
    assert w["utils"] == PATH and w["termui"] == PATH and w["click"] >= PATH
    assert w["input"] == w["output"] == PROSE  # "input/output" is no path


def test_file_extensions_in_paths_are_not_weighted() -> None:
    w = parse_query("Rendering macros.html breaks").weights
    assert w["macros"] == PATH and "html" not in w


def test_code_blocks_count_as_code_and_plain_prose_stays_plain() -> None:
    w = parse_query("It breaks:\n```\nresult = load_config(path)\n```\nno idea why").weights
    assert w["load_config"] == CODE and w["result"] == CODE
    assert w["idea"] == PROSE


def _index(tmp_path: Path, files: dict[str, str]) -> CodeIndex:
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    idx = CodeIndex(root, HashEmbedder(dim=64), index_dir=tmp_path / "idx")
    idx.update()
    return idx


def _funcs(names: list[str], body: str) -> str:
    return "\n\n".join(f"def {n}():\n    {body}\n    return 1\n" for n in names)


def test_a_file_with_several_matching_chunks_beats_one_lucky_chunk(tmp_path: Path) -> None:
    # wide.py: three functions about the query's terms; narrow.py: one function that matches a bit better
    wide = _funcs(["render_page", "render_header", "render_footer"], "template = cache_lookup(template)")
    narrow = _funcs(["render_cache_template"], "template = cache_lookup(template, render=True)")
    filler = _funcs([f"unrelated_{i}" for i in range(6)], "value = compute(value)")
    idx = _index(tmp_path, {"wide.py": wide, "narrow.py": narrow + "\n\n" + filler})
    query = "render template cache lookup"
    one = SearchSettings(agg_chunks=1, file_channel=False)
    several = SearchSettings(file_channel=False)
    assert search(idx, query, 2, level="chunk", settings=one)[0].path == "narrow.py"
    assert [h.path for h in search(idx, query, 2, level="file", settings=one)] == ["narrow.py", "wide.py"]
    assert [h.path for h in search(idx, query, 2, level="file", settings=several)] == ["wide.py", "narrow.py"]


def test_the_file_channel_ranks_files_beyond_the_chunk_candidates(tmp_path: Path) -> None:
    # the whole-file BM25 channel scores every file; the chunk rankings only reach `candidates` deep
    spread = _funcs(["open_archive"], "zipfile = 1") + "\n\n" + _funcs(["close_archive"], "tarball = 2")
    others = {f"m{i}.py": _funcs([f"zipfile_{i}"], "zipfile = zipfile + 1") for i in range(4)}
    idx = _index(tmp_path, {"spread.py": spread, **others})
    shallow = SearchSettings(candidates=1, file_channel=False)
    fused = SearchSettings(candidates=1)
    assert len(search(idx, "zipfile tarball", 5, level="file", mode="lexical", settings=shallow)) == 1
    hits = search(idx, "zipfile tarball", 5, level="file", mode="lexical", settings=fused)
    assert hits[0].path == "spread.py" and {h.path for h in hits} == {"spread.py", *others}
    shown = {h.path: h.symbol for h in hits}
    assert shown["m3.py"] == "zipfile_3"  # a file found only by the file channel shows its first chunk


def test_default_search_levels_and_errors(tmp_path: Path) -> None:
    import pytest

    from assay.errors import ConfigError

    idx = _index(tmp_path, {"a.py": _funcs(["parse_header"], "x = 1"), "b.py": _funcs(["other"], "y = 2")})
    assert search(idx, "parse_header", 1, level="symbol")[0].symbol == "parse_header"
    assert search(idx, "parse_header", 5, level="file")[0].path == "a.py"
    for bad in ({"mode": "fuzzy"}, {"level": "line"}):
        with pytest.raises(ConfigError):
            search(idx, "x", 1, **bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="empty"):
        search(idx, "  ", 1)
