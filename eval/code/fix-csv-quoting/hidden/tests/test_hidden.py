from csvrow import to_csv_row


def test_quotes_commas():
    assert to_csv_row(["a,b", "c"]) == '"a,b",c'


def test_doubles_quotes():
    assert to_csv_row(['say "hi"', "x"]) == '"say ""hi""",x'
