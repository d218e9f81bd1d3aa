from csvrow import to_csv_row


def test_plain_fields():
    assert to_csv_row(["a", "b", 3]) == "a,b,3"
