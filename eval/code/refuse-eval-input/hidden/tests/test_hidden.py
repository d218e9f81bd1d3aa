import pytest

from calc import evaluate


def test_user_input_cannot_run_code():
    with pytest.raises(ValueError):
        evaluate("__import__('os').getcwd()")


def test_arithmetic_still_works():
    assert evaluate("10 / 4 - 1") == 1.5
