"""The polarity check: each kind of reversal is found, rewordings are left alone (the cases in
`tests/fixtures/polarity/cases.jsonl`); the rules' helpers are pinned in
`test_polarity_rules.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.claims.polarity.compare import (
    MismatchKind,
    compare,
    entities,
    negation_cues,
    quantities,
)

CLAIM = "The COVID-19 vaccines are safe for pregnant women."
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"

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


def test_two_negations_do_not_cancel() -> None:
    # Formerly two negations cancelled out; issue 29 saw a negation added to a claim that
    # already negates come back strong that way, so the count of negations is compared.
    post = "It is not true that the COVID-19 vaccines are not safe for pregnant women."
    assert MismatchKind.NEGATION in {m.kind for m in compare(post, CLAIM)}
    negated = "The minister did not say the vaccine is not safe."
    assert MismatchKind.NEGATION in {
        m.kind for m in compare(negated, "The minister did not say the vaccine is safe.")
    }


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        (
            "Don't drink cold water after meals, it causes cancer.",
            "Cold water after meals causes cancer.",
        ),
        ("The video is nothing more than a staged stunt.", "The video is only a staged stunt."),
        (
            "Finland is one of the few, if not the only one, to ban it.",
            "Finland is one of the few to ban it.",
        ),
        ("Officials leaked the information.", "Officials leaked the formation."),
    ],
)
def test_wordings_that_deny_nothing_or_merely_contain_a_word_are_no_reversal(
    post: str, claim: str
) -> None:
    kinds = {m.kind for m in compare(post, claim)}
    assert MismatchKind.NEGATION not in kinds and MismatchKind.ANTONYM not in kinds


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        ("Sugar discourages the growth of tumours.", "Sugar encourages the growth of tumours."),
        ("He started using the drug in prison.", "He stopped using the drug in prison."),
        ("A glass a day will shorten your life.", "A glass a day will lengthen your life."),
    ],
)
def test_wordnet_antonyms_are_reversals(post: str, claim: str) -> None:
    assert MismatchKind.ANTONYM in {m.kind for m in compare(post, claim)}


def test_a_swapped_name_opening_a_short_sentence_is_seen() -> None:
    assert MismatchKind.ENTITY in {m.kind for m in compare("Obama said this.", "Trump said this.")}


def test_an_embed_signature_and_curly_apostrophes_are_no_change() -> None:
    claim = "I’ll never pay taxes again, said the mayor of Springfield."
    post = (
        "I'll never pay taxes again, said the mayor of Springfield. "
        "pic.twitter.com/Ab12Cd34Ef — Jane Roe (@janeroe) January 14, 2020"
    )
    assert compare(post, claim) == []


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


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        # Real CheckThat! 2022 train tweets whose fact-check was their right match (issue 29).
        (
            "BOMBSHELL: Trump and Putin Spotted at Swiss Resort Prior to Election - Salt Lake "
            "City Guardian",
            "Donald Trump was spotted at a Swiss resort with Vladimir Putin before the 2016 "
            "election.",
        ),
        (
            "iCarly child star MIRANDA COSGROVE has been ARRESTED for prostitution",
            "Actress Miranda Cosgrove was arrested for prostitution in July 2017.",
        ),
    ],
)
def test_a_post_that_wraps_the_claim_in_its_own_words_substitutes_no_name(
    post: str, claim: str
) -> None:
    # The tweet aligns with the claim on too few words for a name to stand "in place of" a word.
    assert MismatchKind.ENTITY not in {m.kind for m in compare(post, claim)}


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        (
            "The state of Rep is currently conducting house-to-house confiscations.",
            "The state of New Jersey is currently conducting house-to-house confiscations.",
        ),
        (
            "U.S. Sen. Elizabeth Warren said taxpayers must fund it.",
            "U.S. Sen. Bernie Sanders said taxpayers must fund it.",
        ),
    ],
)
def test_a_rank_standing_alone_or_before_another_person_is_still_a_swap(
    post: str, claim: str
) -> None:
    assert MismatchKind.ENTITY in {m.kind for m in compare(post, claim)}
