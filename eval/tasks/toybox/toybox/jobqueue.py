"""Running a list of jobs with retries."""

from dataclasses import dataclass


@dataclass
class Job:
    name: str
    #: how many more times a failing job is tried
    retries: int = 1


def drain(jobs, run):
    """Run every job with ``run(job) -> bool``; a failing job is tried again up to ``job.retries`` more
    times. A dict: job name -> ``"ok"`` or ``"failed"``, and how many tries each took."""
    results, tries = {}, {}
    for job in jobs:
        attempt = 0
        while True:
            attempt += 1
            if run(job):
                results[job.name] = "ok"
                break
            if attempt == job.retries:
                results[job.name] = "failed"
                break
        tries[job.name] = attempt
    return results, tries
