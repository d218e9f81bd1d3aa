"""LoCoMo's answer score as its paper computes it, and the loader's refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.memory._grading import adversarial_credit, locomo_f1, normalize_answer, token_f1
from assay.evals.memory._locomo import load_locomo, sample_locomo

SLICE = Path(__file__).resolve().parents[2] / "fixtures" / "locomo" / "locomo_slice.json"


def test_normalisation_drops_case_punctuation_commas_articles_and_and() -> None:
    assert normalize_answer("The Cello, and a Piano!") == "cello piano"
    assert normalize_answer("Mentoring program; school speech") == "mentoring program school speech"


@pytest.mark.parametrize(
    ("prediction", "gold", "f1"),
    [
        ("the cello", "Cello", 1.0),
        ("She was running", "runs", 0.5),  # stems meet (run), two extra words on the prediction side
        ("Pepper", "Pepper the cat", 2 / 3),
        ("Lisbon", "Porto", 0.0),
        ("", "Porto", 0.0),
    ],
)
def test_token_f1_is_over_stemmed_normalised_tokens(prediction: str, gold: str, f1: float) -> None:
    assert token_f1(prediction, gold) == pytest.approx(f1)


def test_multi_hop_scores_each_gold_item_by_its_best_predicted_item() -> None:
    assert locomo_f1("a vase, a bowl", "bowl, vase", 1) == 1.0
    assert locomo_f1("bowl", "bowl, vase", 1) == 0.5
    # without the list rule the same answer would score its plain token F1
    assert token_f1("bowl", "bowl, vase") == pytest.approx(2 / 3)


def test_open_domain_gold_keeps_what_precedes_its_rationale() -> None:
    assert locomo_f1("Likely yes", "Likely yes; his brother moves to Lisbon", 3) == 1.0
    assert locomo_f1("Likely yes", "Likely yes; his brother moves to Lisbon", 4) < 0.5


def test_adversarial_credit_is_for_saying_it_was_not_mentioned() -> None:
    assert locomo_f1("Not mentioned in the conversation", "", 5) == 1.0
    assert adversarial_credit("There is no information available about that.") == 1.0
    assert adversarial_credit("Pepper") == 0.0
    assert adversarial_credit("I think it is Pepper, not sure") == 0.0


def test_the_slice_loads_in_the_published_layout() -> None:
    convs = load_locomo(SLICE)
    assert [c.sample_id for c in convs] == ["slice-1", "slice-2"]
    c1 = convs[0]
    assert c1.speakers == ("Nadia", "Tomas")
    assert [s.at.isoformat() for s in c1.sessions][:1] == ["2023-03-03T10:15:00+00:00"]
    assert "[shares a person holding a cello on a stage]" in c1.sessions[2].turns[1].text
    adv = next(q for q in c1.questions if q.category == 5)
    assert adv.answer == "" and adv.adversarial_answer == "Pepper"
    assert {q.category_name for c in convs for q in c.questions} == {
        "single-hop", "multi-hop", "temporal", "open-domain", "adversarial"
    }  # fmt: skip


def test_sampling_is_fixed_by_its_seed() -> None:
    convs = load_locomo(SLICE)
    one = sample_locomo(convs, conversations_n=1, questions_n=3, seed=7)
    again = sample_locomo(convs, conversations_n=1, questions_n=3, seed=7)
    assert [q.id for c in one for q in c.questions] == [q.id for c in again for q in c.questions]
    assert len(one) == 1 and len(one[0].questions) == 3
    others = {tuple(q.id for c in sample_locomo(convs, conversations_n=2, questions_n=3, seed=s) for q in c.questions)
              for s in range(6)}  # fmt: skip
    assert len(others) > 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d[0]["qa"][0].update(category=9),
            "sample 0 (slice-1) question 0: category 9 is not one of 1-5",
        ),
        (lambda d: d[0]["conversation"].pop("session_2_date_time"), "session_2 has no session_2_date_time"),
        (
            lambda d: d[0]["conversation"].update(session_1_date_time="yesterday"),
            "unreadable date 'yesterday'",
        ),
        (lambda d: d[1].update(sample_id="slice-1"), "duplicate sample_id"),
        (lambda d: d[0]["qa"][0].pop("answer"), "sample 0 (slice-1) question 0 has no answer"),
    ],
)
def test_a_malformed_record_is_named(tmp_path: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(SLICE.read_text())
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as exc:
        load_locomo(bad)
    assert message in str(exc.value) and str(bad) in str(exc.value)
