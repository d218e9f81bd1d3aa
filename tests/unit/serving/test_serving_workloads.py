from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.serving import (
    DatasetWorkload,
    EmailTriage,
    LengthSpec,
    SyntheticWorkload,
    parse_triage_answer,
)
from assay.evals.serving._workloads import CATEGORIES, default_data_dir, load_mbox


def test_shipped_mailbox_has_50_plus_labelled_emails_of_varied_length() -> None:
    emails = load_mbox(default_data_dir() / "triage.mbox")
    assert len(emails) >= 50
    assert len({e.id for e in emails}) == len(emails)
    assert set(Counter(e.category for e in emails)) == set(CATEGORIES)
    assert 5 <= sum(e.urgent for e in emails) <= len(emails) - 5
    assert 5 <= sum(e.personal for e in emails) <= len(emails) - 5
    lengths = sorted(len(e.text) for e in emails)
    assert lengths[-1] > 8 * lengths[0]  # one-liners and long threads


def test_triage_request_hides_the_labels_and_uses_the_fixed_prompt(tmp_path: Path) -> None:
    work = EmailTriage()
    item = work.item(0)
    (message,) = item.body["messages"]
    template = (default_data_dir() / "triage_prompt.txt").read_text().strip()
    head, tail = template.split("{email}")
    assert message["content"].startswith(head) and message["content"].endswith(tail)
    assert "X-Triage" not in message["content"] and "Subject: " in message["content"]
    assert work.item(-1).key != work.item(0).key  # warm-up draws from the other end
    assert work.item(len(work.emails)).key == work.item(0).key
    bad = tmp_path / "prompt.txt"
    bad.write_text("no placeholder here")
    with pytest.raises(ConfigError, match="--prompt-file"):
        EmailTriage(prompt_file=bad)


def test_triage_answers_are_parsed_and_scored() -> None:
    assert parse_triage_answer("category: Finance\nurgent: yes\npersonal: no") == {
        "category": "finance",
        "urgent": True,
        "personal": False,
    }
    assert parse_triage_answer("**Category**: spam, Urgent - no") == {
        "category": "spam",
        "urgent": False,
        "personal": None,
    }
    work = EmailTriage()
    item = work.item(0)
    right = work.score(item, f"category: {item.labels['category']}\nurgent: no\npersonal: no")
    assert right["category_ok"] and right["parsed"]
    wrong = work.score(item, "I cannot help with that")
    assert not wrong["category_ok"] and not wrong["parsed"]
    metrics = work.level_metrics([right, wrong])
    assert metrics["accuracy_category"] == 0.5 and metrics["answer_parse_rate"] == 0.5


def test_bad_mailbox_label_names_file_and_message(tmp_path: Path) -> None:
    box = tmp_path / "bad.mbox"
    box.write_text(
        "From x\nSubject: hi\nX-Triage-Category: chores\nX-Triage-Urgent: no\nX-Triage-Personal: no\n\nbody\n"
    )
    with pytest.raises(ConfigError, match=r"bad.mbox: message 1: X-Triage-Category 'chores'"):
        EmailTriage(mbox=box)
    with pytest.raises(ConfigError, match="--mbox"):
        EmailTriage(mbox=tmp_path / "missing.mbox")


def test_length_specs() -> None:
    rng = random.Random(0)
    assert LengthSpec.parse("128", "--input-len").draw(rng) == 128
    uni = LengthSpec.parse("uniform:10,20", "--input-len")
    assert all(10 <= uni.draw(rng) <= 20 for _ in range(200))
    normal = [LengthSpec.parse("normal:100,10", "--output-len").draw(rng) for _ in range(2000)]
    assert 98 < sum(normal) / len(normal) < 102
    for bad in ("0", "uniform:20,10", "gauss:1,2", "abc"):
        with pytest.raises(ConfigError, match="--output-len"):
            LengthSpec.parse(bad, "--output-len")


def test_synthetic_prompts_are_deterministic_and_sized() -> None:
    work = SyntheticWorkload(LengthSpec.parse("64", "x"), LengthSpec.parse("uniform:8,16", "x"))
    a, b = work.item(3), SyntheticWorkload(work.input_len, work.output_len).item(3)
    assert a.body == b.body
    assert len(a.prompt_text.split()) == 64
    assert 8 <= a.body["max_tokens"] <= 16 and a.body["ignore_eos"] is True
    comp = SyntheticWorkload(work.input_len, work.output_len, endpoint="completions").item(0)
    assert comp.path == "/v1/completions" and "prompt" in comp.body


def test_dataset_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"prompt": "hi", "max_tokens": 5}\n\n{"messages": [{"role": "user", "content": "yo"}]}\n'
    )
    work = DatasetWorkload(path, default_max_tokens=32)
    assert work.natural_size() == 2
    assert work.item(0).body["max_tokens"] == 5 and work.item(1).body["max_tokens"] == 32
    path.write_text('{"prompt": "ok"}\n{"text": "no prompt"}\n')
    with pytest.raises(ConfigError, match=r"d.jsonl:2: --dataset"):
        DatasetWorkload(path, 32)
    path.write_text("not json\n")
    with pytest.raises(ConfigError, match=r"d.jsonl:1: --dataset: not JSON"):
        DatasetWorkload(path, 32)
