from datetime import datetime, timezone

import pytest

from toybox.timeparse import parse_timestamp


def test_parses_utc():
    assert parse_timestamp("2024-03-01T12:30:05Z") == datetime(2024, 3, 1, 12, 30, 5, tzinfo=timezone.utc)


def test_strips_spaces():
    assert parse_timestamp(" 2024-03-01T00:00:00Z\n").day == 1


@pytest.mark.parametrize("bad", ["2024-03-01T12:30:05", "2024-03-01 12:30:05Z", "yesterday", ""])
def test_rejects_non_utc(bad):
    with pytest.raises(ValueError):
        parse_timestamp(bad)
