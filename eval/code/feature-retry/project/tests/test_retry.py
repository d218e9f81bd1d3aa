from retry import retry


def test_passes_through_a_result():
    @retry(3)
    def ok(x):
        return x * 2

    assert ok(4) == 8
    assert ok.__name__ == "ok"
