import pytest

from duration import parse_duration


def test_hours_and_seconds():
    assert parse_duration("2h") == 7200
    assert parse_duration("45s") == 45


def test_rejects_garbage():
    with pytest.raises(ValueError):
        parse_duration("soon")
