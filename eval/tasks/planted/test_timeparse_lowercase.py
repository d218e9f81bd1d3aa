from datetime import datetime, timezone

import pytest

from toybox.timeparse import parse_timestamp


def test_lowercase_z():
    assert parse_timestamp("2024-03-01T12:30:05z") == datetime(2024, 3, 1, 12, 30, 5, tzinfo=timezone.utc)


def test_uppercase_z_still_parses():
    assert parse_timestamp("2024-03-01T12:30:05Z").minute == 30


def test_no_zone_still_rejected():
    with pytest.raises(ValueError):
        parse_timestamp("2024-03-01T12:30:05")
