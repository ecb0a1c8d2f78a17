"""The polarity check: each kind of reversal is found, rewordings are left alone (the cases in
`tests/fixtures/polarity/cases.jsonl`); the rules' helpers are pinned in
`test_polarity_rules.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.polarity import MismatchKind, compare, entities, negation_cues, quantities

CLAIM = "The COVID-19 vaccines are safe for pregnant women."
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# One case a line: a post, a fact-checked claim, and the kind of mismatch between them ("none":
# a rewording). Each reversal and rewording the error analysis of `bench/claim_polarity.py`
# found is there, with the rule it pins.
CASES = [
    json.loads(line)
    for line in (FIXTURES / "polarity" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
REVERSALS = [(MismatchKind(c["kind"]), c["post"], c["claim"]) for c in CASES if c["kind"] != "none"]
REWORDINGS = [(c["post"], c["claim"]) for c in CASES if c["kind"] == "none"]


@pytest.mark.parametrize(("kind", "post", "claim"), REVERSALS)
def test_a_reversal_is_a_mismatch_of_its_kind(kind: MismatchKind, post: str, claim: str) -> None:
    assert kind in {m.kind for m in compare(post, claim)}


@pytest.mark.parametrize(("post", "claim"), REWORDINGS)
def test_a_rewording_is_no_mismatch(post: str, claim: str) -> None:
    assert compare(post, claim) == []


def test_two_negations_cancel() -> None:
    post = "It is not true that the COVID-19 vaccines are not safe for pregnant women."
    assert MismatchKind.NEGATION not in {m.kind for m in compare(post, CLAIM)}


def test_leaving_a_number_or_a_name_out_is_still_the_same_claim() -> None:
    claim = "Riad Salameh said the rate will move from 8,000 to 15,000 next month."
    assert compare("Salameh said the rate will move to 15,000.", claim) == []


def test_quantities_are_normalised_across_writings() -> None:
    assert quantities("8,000 or 8.000 or 8000") == {"8000"}
    assert quantities("1.1 million and 2 percent") == {"1.1e+06", "2"}
    assert quantities("twelve people in May 2020") == {"12", "2020", "month 5"}
    assert quantities("you may go") == set()


def test_entities_leave_out_function_words_and_months() -> None:
    assert entities("The WHO met Joe Biden. In June they spoke.") == {"WHO", "Joe Biden"}


def test_a_word_opening_a_sentence_is_a_name_only_if_it_looks_like_one() -> None:
    assert entities("Drinking water helps. Reports say so.") == set()
    assert entities("Algeria's team left. Peru won. NATO met.") == {"Algeria's", "Peru", "NATO"}


def test_negation_cues_count_contractions_and_phrases() -> None:
    assert negation_cues("It isn't true, it is false that they never came") == [
        "isn't",
        "never",
        "false that",
    ]


def test_a_mismatch_says_what_differs() -> None:
    [mismatch] = compare("Sales fell by 5%.", "Sales rose by 5%.")
    assert str(mismatch) == "antonym: post says 'fell', fact-checked claim says 'rose'"
