from prices import total


def test_lower_case_region():
    assert total(100, "uk") == 120
    assert total(100, "de") == 119
