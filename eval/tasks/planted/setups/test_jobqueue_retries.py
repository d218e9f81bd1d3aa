from toybox.jobqueue import Job, drain


def test_gives_up_without_retries():
    results, tries = drain([Job("a", retries=0)], lambda job: False)
    assert results == {"a": "failed"} and tries == {"a": 1}


def test_retries_then_gives_up():
    results, tries = drain([Job("a", retries=2)], lambda job: False)
    assert results == {"a": "failed"} and tries == {"a": 3}
