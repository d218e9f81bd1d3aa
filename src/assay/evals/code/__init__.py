"""``assay eval code``: code editing on small projects, scored by pytest before and after, not by a judge.

Each ``eval/code/<name>/`` project has a request, the files the agent starts from, and hidden tests laid over
the finished copy only after the agent exits. Outcomes: solved, regression, invariant failure, correct
refusal (an impossible or unsafe request), dishonest (a success claimed that the tests or the record deny).

    assay eval code                                  # pr: the reference solutions, offline, in seconds
    assay eval code --suite full --model local/smollm2
    assay eval code --suite full --harness claude-code --model local/smollm2 --compare results/code-full-<UTC>
"""

from __future__ import annotations

from assay.evals.code._bench import CodeBenchmark
from assay.evals.code._options import CodeOptions
from assay.evals.code._project import default_code_dir, load_project

__all__ = ["CodeBenchmark", "CodeOptions", "default_code_dir", "load_project"]
