from phone import normalize


def test_country_code():
    assert normalize("+44 20 7946 0000") == "02079460000"
    assert normalize("+447700900123") == "07700900123"
