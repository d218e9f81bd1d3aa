import pytest

from retry import retry


def test_retries_until_success():
    calls = []

    @retry(3)
    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise OSError("try again")
        return "done"

    assert flaky() == "done"
    assert len(calls) == 3


def test_reraises_last_error():
    calls = []

    @retry(2)
    def broken():
        calls.append(1)
        raise ValueError(f"call {len(calls)}")

    with pytest.raises(ValueError, match="call 2"):
        broken()
    assert len(calls) == 2
