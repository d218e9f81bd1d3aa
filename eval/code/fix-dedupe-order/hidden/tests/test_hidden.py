from listutil import dedupe


def test_keeps_first_occurrence_order():
    assert dedupe(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]
    assert dedupe([30, 10, 30, 20]) == [30, 10, 20]
