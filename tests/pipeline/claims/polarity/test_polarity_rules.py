"""The polarity rules' helpers, sharpened on the error analysis of `bench/claim_polarity.py`
(the reversals and rewordings it found are in the tables of `test_polarity.py`), and the key
predicate rule (`pipeline.claims.polarity.predicates`)."""

from __future__ import annotations

import pytest

from pipeline.claims.polarity.compare import MismatchKind, compare, quantities, scoped_cues
from pipeline.claims.polarity.names import same_name_word
from pipeline.claims.polarity.predicates import predicate_difference


def kinds(post: str, claim: str) -> set[MismatchKind]:
    return {m.kind for m in compare(post, claim)}


def test_a_prefix_that_makes_an_ordinary_word_is_no_antonym() -> None:
    assert MismatchKind.ANTONYM not in kinds("They deserve it.", "They serve it.")
    assert MismatchKind.ANTONYM not in kinds("They design it.", "They sign it.")


def test_digits_inside_a_formula_are_no_quantity_and_spans_of_years_are() -> None:
    assert quantities("CO2 and H5N1") == set()
    assert quantities("in three millennia") == quantities("in 3,000 years") == {"3000"}


def test_a_negation_of_something_the_other_text_does_not_say_is_left_out() -> None:
    claim = "Canada says Jerusalem is the capital of Palestine, or we never come back."
    assert scoped_cues(claim, "Canada says Jerusalem is the capital of Palestine.") == []
    assert scoped_cues("Canada never said Jerusalem is the capital.", claim) == ["never"]


def test_a_negation_across_languages_still_counts() -> None:
    post = "Die Impfstoffe sind nicht sicher für Schwangere."
    assert scoped_cues(post, "The vaccines are safe for pregnant women.") == ["nicht"]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("lebanese", "lebanon", True),
        ("salameh", "salama", True),
        ("french", "france", True),
        # Romanisations of one name.
        ("saied", "saeed", True),
        ("riad", "riyad", True),
        ("mousa", "musa", True),
        ("coronavac", "coronavirus", False),
        ("air", "airport", False),
        ("iran", "iraq", False),
    ],
)
def test_name_words_are_one_name_up_to_a_short_ending(a: str, b: str, same: bool) -> None:
    assert same_name_word(a, b) is same


def test_a_post_dropping_the_claims_key_predicate_says_which() -> None:
    found = predicate_difference(
        "Lemon water helps you stay hydrated when you have the flu.",
        "Drinking hot lemon water every hour kills the flu virus in your throat.",
    )
    assert found == "fact-checked claim says 'kills', the post has no word for it"


def test_a_post_asserting_a_predicate_the_claim_lacks_is_found_the_other_way() -> None:
    found = predicate_difference("Lemon water cures the flu.", "Lemon water soothes the flu.")
    assert found == "post says 'cures', the fact-checked claim has no word for it"


def test_a_claim_without_a_key_predicate_leaves_the_rule_silent() -> None:
    assert predicate_difference("Carrots are orange.", "Carrots taste sweet.") is None


def test_the_predicate_rule_leaves_a_post_in_another_language_alone() -> None:
    german = "Heißes Zitronenwasser jede Stunde zu trinken tötet das Grippevirus im Hals."
    claim = "Drinking hot lemon water every hour kills the flu virus in your throat."
    assert predicate_difference(german, claim) is not None  # the English table sees no "kills"
    assert MismatchKind.PREDICATE not in kinds(german, claim)
