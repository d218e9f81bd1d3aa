import pytest

from phone import normalize


def test_spaces_and_dashes():
    assert normalize("020 7946-0000") == "02079460000"


def test_rejects_foreign():
    with pytest.raises(ValueError):
        normalize("+1 212 555 0100")
