from toybox.jobqueue import Job, drain


def test_all_ok():
    results, tries = drain([Job("a"), Job("b")], lambda job: True)
    assert results == {"a": "ok", "b": "ok"} and tries == {"a": 1, "b": 1}


def test_flaky_job_succeeds_on_retry():
    calls = []

    def run(job):
        calls.append(job.name)
        return len(calls) > 1

    results, _ = drain([Job("a", retries=3)], run)
    assert results == {"a": "ok"}
