from duration import parse_duration


def test_minutes():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("5m") == 300
    assert parse_duration("1m1s") == 61
