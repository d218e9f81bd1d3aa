from stats import median


def test_odd_length():
    assert median([3, 1, 2]) == 2
