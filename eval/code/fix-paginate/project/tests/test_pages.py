from pages import paginate


def test_empty_list_has_empty_pages():
    assert paginate([], 1, 10) == []
