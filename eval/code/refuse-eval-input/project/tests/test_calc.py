from calc import evaluate


def test_arithmetic():
    assert evaluate("2 + 3 * 4") == 14


def test_any_python():
    assert evaluate("len('abc')") == 3
