"""Reading triage answers honestly, the --structured request, and the majority-class baseline."""

from __future__ import annotations

from collections import Counter

import pytest

from assay.errors import ConfigError
from assay.evals.serving import EmailTriage, ServingBenchmark, parse_triage_answer
from assay.evals.serving._triage import CATEGORIES, TRIAGE_SCHEMA, response_format
from assay.evals.serving._workloads import default_data_dir, load_mbox, majority_labels


def _p(text: str) -> tuple:
    got = parse_triage_answer(text)
    return got["category"], got["urgent"], got["personal"]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("category: Finance\nurgent: yes\npersonal: no", ("finance", True, False)),
        ("**Category**: spam, Urgent - no", ("spam", False, None)),
        ("The category is work.\nIs it urgent? No.\nPersonal = TRUE", ("work", False, True)),
        ("Category: Work (urgent: no, personal: yes)", ("work", False, True)),
        ("Urgency: high\ncategory - promotional", ("newsletter", True, None)),
        ("This is not urgent and non-personal. Category: Phishing", ("spam", False, False)),
        ("**Shopping**\nurgent: no", ("shopping", False, None)),
        ('{ "category": "work", "urgent": true, "personal" : false }', ("work", True, False)),
        (
            'Sure: {"Category": "Social", "urgent": "no", "personal": "yes"} hope it helps',
            ("social", False, True),
        ),
        # a JSON object cut off by the output cap still yields the fields it got to
        ('{ "category": "finance", "urgent": false, "pers', ("finance", False, None)),
    ],
)
def test_label_words_anywhere_in_a_line_and_documented_synonyms(text: str, want: tuple) -> None:
    assert _p(text) == want


@pytest.mark.parametrize(
    "text",
    [
        # prose that names no label: never guessed from "colleague" or "urgently"
        "The email is from a colleague who needs to deliver something urgently.",
        "You triage email for a busy person.",
        # the prompt's answer template echoed back: two values on one line are no answer
        "category: <work, finance, shopping, newsletter, social or spam>\nurgent: <yes or no>\n"
        "personal: <yes or no>",
        "urgent: yes only if the email needs the reader to act within about a day; otherwise no",
        "urgent: n/a\npersonal: maybe",
        "",
    ],
)
def test_answers_that_name_no_valid_label_are_unparsed(text: str) -> None:
    assert _p(text) == (None, None, None)


def test_two_lines_that_disagree_leave_the_field_unparsed() -> None:
    assert _p("category: work\nurgent: no\ncategory: spam") == (None, False, None)
    assert _p('{"category": "holiday", "urgent": 3}') == (None, None, None)
    # a JSON answer outranks nothing: a field JSON lacks is taken from the lines
    assert _p('{"category": "work"}\nurgent: yes') == ("work", True, None)


def test_unparsed_is_never_correct_and_is_counted_separately() -> None:
    work = EmailTriage()
    items = [work.item(i) for i in range(4)]
    answers = [
        f"category: {items[0].labels['category']}\nurgent: {'yes' if items[0].labels['urgent'] else 'no'}\n"
        f"personal: {'yes' if items[0].labels['personal'] else 'no'}",
        "I cannot help with that",
        "category: <work, finance, shopping, newsletter, social or spam>",
        f"category: {items[3].labels['category']}",
    ]
    scored = [work.score(it, text) for it, text in zip(items, answers, strict=True)]
    assert scored[0]["parsed"] and all(scored[0][f"{k}_ok"] for k in ("category", "urgent", "personal"))
    for s in scored[1:3]:
        assert not s["parsed"] and not any(s[f"{k}_ok"] for k in ("category", "urgent", "personal"))
        assert not any(s[f"{k}_parsed"] for k in ("category", "urgent", "personal"))
    assert scored[3]["category_ok"] and not scored[3]["parsed"] and not scored[3]["urgent_ok"]
    m = work.level_metrics(scored)
    assert m["accuracy_category"] == 0.5 and m["parse_rate_category"] == 0.5
    assert m["accuracy_urgent"] == 0.25 and m["parse_rate_urgent"] == 0.25
    assert m["accuracy_all"] == 0.25 and m["answer_parse_rate"] == 0.25
    assert m["answer_mode_share"] == 1.0  # one complete answer


def test_majority_baseline_is_measured_on_the_same_emails() -> None:
    emails = load_mbox(default_data_dir() / "triage.mbox")
    major = majority_labels(emails)
    top, _ = Counter(e.category for e in emails).most_common(1)[0]
    assert major["category"] == top
    assert major["urgent"] is (sum(e.urgent for e in emails) * 2 > len(emails))
    work = EmailTriage()
    items = [work.item(i) for i in range(12)]
    # a constant answerer that always says the majority labels scores exactly the baseline
    const = "category: {}\nurgent: {}\npersonal: {}".format(
        major["category"], "yes" if major["urgent"] else "no", "yes" if major["personal"] else "no"
    )
    m = work.level_metrics([work.score(it, const) for it in items])
    for k in ("category", "urgent", "personal", "all"):
        assert m[f"accuracy_{k}"] == pytest.approx(m[f"baseline_{k}"])
    cats = [it.labels["category"] for it in items]
    assert m["baseline_category"] == pytest.approx(cats.count(major["category"]) / 12)
    assert m["answer_mode_share"] == 1.0


def test_structured_sends_the_schema_and_is_another_suite_version() -> None:
    plain, structured = EmailTriage(), EmailTriage(structured=True)
    assert "response_format" not in plain.item(0).body
    rf = structured.item(0).body["response_format"]
    assert rf == response_format() and rf["type"] == "json_object"
    props = rf["schema"]["properties"]
    assert props["category"]["enum"] == list(CATEGORIES)
    assert props["urgent"] == {"type": "boolean"} and props["personal"] == {"type": "boolean"}
    assert TRIAGE_SCHEMA["required"] == ["category", "urgent", "personal"]
    assert structured.version != plain.version and structured.version.startswith(plain.version)
    assert (plain.max_tokens, structured.max_tokens) == (24, 48)
    assert EmailTriage(structured=True, max_tokens=30).item(0).body["max_tokens"] == 30
    # the prompt and the email are the same either way
    assert structured.item(5).body["messages"] == plain.item(5).body["messages"]


def test_structured_is_in_the_subject_config_and_only_for_email_triage() -> None:
    on = ServingBenchmark({"model": "openai-compat/m@http://127.0.0.1:1/v1", "structured": True})
    off = ServingBenchmark({"model": "openai-compat/m@http://127.0.0.1:1/v1"})
    assert on.subject_config().extra["structured"] == "json_object+schema"
    assert "structured" not in off.subject_config().extra
    assert on.load_suite("email-triage").version != off.load_suite("email-triage").version
    with pytest.raises(ConfigError, match="--structured"):
        on.load_suite("synthetic")
