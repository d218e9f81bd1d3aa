from listutil import dedupe


def test_removes_duplicates():
    assert sorted(dedupe([3, 1, 3, 2, 1])) == [1, 2, 3]
