"""The train / held-out split: stable, about 70/30 within each category, rotated by the salt."""

from __future__ import annotations

from assay.hillclimb import split_cases


def _cases() -> dict[str, str]:
    cats = {"docs": 10, "tools": 7, "memory": 3, "alone": 1}
    return {f"{cat}-{i}": cat for cat, n in cats.items() for i in range(n)}


def test_stratified_about_70_30_and_stable() -> None:
    split = split_cases(_cases(), "s")
    held = {cat: len(v["heldout"]) for cat, v in split.by_category.items()}
    assert held["docs"] == 3 and held["tools"] == 2 and held["memory"] == 1  # round(0.3 n), at least one
    assert sorted(split.train + split.heldout) == sorted(_cases())
    assert not set(split.train) & set(split.heldout)
    assert (
        split_cases(dict(reversed(list(_cases().items()))), "s") == split
    )  # order of the input does not matter


def test_the_salt_rotates_the_split() -> None:
    splits = {tuple(split_cases(_cases(), f"salt-{i}").heldout) for i in range(6)}
    assert len(splits) > 1


def test_a_case_keeps_its_side_when_another_category_grows() -> None:
    before = split_cases(_cases(), "s")
    more = {**_cases(), **{f"new-{i}": "new" for i in range(4)}}
    after = split_cases(more, "s")
    for cat in ("docs", "tools", "memory", "alone"):
        assert after.by_category[cat] == before.by_category[cat]


def test_a_category_of_one_goes_by_its_hash() -> None:
    sides = {split_cases({"only": "x"}, f"salt-{i}").side("only") for i in range(40)}
    assert sides == {"train", "heldout"}
