"""The Anonymizer (drafts from real use): who and where become fixture values; code and reserved names stay."""

from __future__ import annotations

import pytest

from assay._util import MARKER, Anonymizer
from assay._util._scrub import FIXTURE_EMAIL, FIXTURE_HOME, FIXTURE_HOST, FIXTURE_IP, FIXTURE_WORKDIR


@pytest.fixture
def anon() -> Anonymizer:
    return Anonymizer(env={}, workdirs=["/tmp/ccwd-x1"], homes=["/srv/home/dev"])


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("open /tmp/ccwd-x1/src/app.py", f"open {FIXTURE_WORKDIR}/src/app.py"),
        ("cfg in /srv/home/dev/.config", f"cfg in {FIXTURE_HOME}/.config"),
        ("see /home/alice/notes and /Users/bob/x", f"see {FIXTURE_HOME}/notes and {FIXTURE_HOME}/x"),
        ("keys in /root/.ssh", f"keys in {FIXTURE_HOME}/.ssh"),
        ("ran in /tmp/pytest-7/wd", f"ran in {FIXTURE_WORKDIR}/wd"),
        ("mail Jane.Doe+ops@acme-corp.co.uk", f"mail {FIXTURE_EMAIL}"),
        ("ssh build01.acme-corp.internal", f"ssh {FIXTURE_HOST}"),
        ("GET https://api.acme.io/v1", f"GET https://{FIXTURE_HOST}/v1"),
        ("db at 10.1.2.3:5432", f"db at {FIXTURE_IP}:5432"),
        ("token ghp_0123456789abcdefghijABCDEFGHIJ012345", f"token {MARKER}"),
    ],
)
def test_replaced(anon: Anonymizer, text: str, want: str) -> None:
    assert anon.scrub_text(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "logging.info(x); request.app; setup.py; README.md; threading.local",
        "version 2.1.197 on 127.0.0.1 and 0.0.0.0",
        "user@example.com at host.example, example.org, api.test, localhost",
        "/home/user/project is already the fixture",
    ],
)
def test_kept(anon: Anonymizer, text: str) -> None:
    assert anon.scrub_text(text) == text


def test_a_workdir_inside_a_home_becomes_the_project_and_env_secrets_go() -> None:
    anon = Anonymizer(
        env={"DEPLOY_TOKEN": "s3cr3t-value-123"}, workdirs=["/home/dev/src/app"], homes=["/home/dev"]
    )
    assert (
        anon.scrub_text("cd /home/dev/src/app; echo s3cr3t-value-123")
        == f"cd {FIXTURE_WORKDIR}; echo {MARKER}"
    )
