"""The polarity rules sharpened on the error analysis of `bench/claim_polarity.py`: each kind
of reversal it found the rules missing, and each kind of paraphrase they demoted wrongly."""

from __future__ import annotations

import pytest

from pipeline.polarity import MismatchKind, compare, quantities, scoped_cues
from pipeline.polarity_names import same_name_word


def kinds(post: str, claim: str) -> set[MismatchKind]:
    return {m.kind for m in compare(post, claim)}


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        ("Coffee hydrates the body.", "Coffee dehydrates the body."),
        ("We now have a weak competitor.", "We now have a strong competitor."),
        ("BCG can weaken the immune system.", "BCG can boost the immune system."),
    ],
)
def test_an_antonym_the_table_lacked_is_found(post: str, claim: str) -> None:
    assert MismatchKind.ANTONYM in kinds(post, claim)


def test_a_prefix_that_makes_an_ordinary_word_is_no_antonym() -> None:
    assert MismatchKind.ANTONYM not in kinds("They deserve it.", "They serve it.")
    assert MismatchKind.ANTONYM not in kinds("They design it.", "They sign it.")


def test_a_changed_year_after_a_hyphen_is_a_number_mismatch() -> None:
    post = "Saudi Arabia severed relations with Qatar in mid-2014."
    claim = "Saudi Arabia severed relations with Qatar in mid-2017."
    assert MismatchKind.NUMBER in kinds(post, claim)


def test_digits_inside_a_formula_are_no_quantity_and_spans_of_years_are() -> None:
    assert quantities("CO2 and H5N1") == set()
    assert quantities("in three millennia") == quantities("in 3,000 years") == {"3000"}


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        # A name put in place of another word, the claim's own name still there elsewhere.
        (
            "The Obama medical delegation sent to Lebanon was quarantined, Algeria says.",
            "The Algerian medical delegation sent to Lebanon was quarantined, Algeria says.",
        ),
        # Another person under the same first name.
        ("Riyad Mahrez is among the candidates.", "Riyad Salama is among the candidates."),
        # Another body of the same kind.
        (
            "An officer of the Oxford Security Service was arrested.",
            "An officer of the State Security Service was arrested.",
        ),
        ("He was named Harvard-President of the assembly.", "He was named Vice-President of it."),
        # Names that share their first letters but not their ending.
        ("A vaccine called Macron protected apes.", "A vaccine called CoronaVac protected them."),
        (
            "It was not approved by the U.S. Moderna and Drug Administration.",
            "It was not approved by the U.S. Food and Drug Administration.",
        ),
        ("Vitamin D prevents the common cold.", "Vitamin C prevents the common cold."),
        # A copy whose one change is a capitalised word, even opening a sentence.
        ("Biden signed the bill into law.", "Trump signed the bill into law."),
        ("Can the virus spread over surfaces? Pfizer.", "Can the virus spread over surfaces? Yes."),
    ],
)
def test_a_changed_name_is_an_entity_mismatch(post: str, claim: str) -> None:
    assert MismatchKind.ENTITY in kinds(post, claim)


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        ("Pope Francis backed Trump's campaign.", "The Pope endorsed Donald Trump's campaign."),
        (
            "Bill Gates is the biggest owner of farmland in America.",
            "Bill Gates owns more farmland than anyone else in the United States.",
        ),
        (
            "Algeria won a seat on the UN Human Rights Council.",
            "Algeria was elected to the United Nations Human Rights Council.",
        ),
        (
            "PSG sold 800,000 Messi shirts in a week.",
            "Paris Saint-Germain sold 800,000 Messi shirts in one week.",
        ),
        (
            "Algeria's medical team in Lebanon was quarantined over Covid.",
            "The Algerian medical team in Lebanon was quarantined over the coronavirus.",
        ),
        (
            "The sea is rising faster than at any point in three millennia.",
            "Sea levels are rising faster than at any time in the last 3,000 years.",
        ),
        ("China emits more CO2 than any other country.", "China is the top CO2 emitter."),
        (
            "Canada has declared that Jerusalem is the capital of Palestine.",
            "Canada says Jerusalem is the capital of Palestine. Rule us, or we never come back.",
        ),
    ],
)
def test_a_paraphrase_the_rules_used_to_demote_passes(post: str, claim: str) -> None:
    assert compare(post, claim) == []


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
        ("coronavac", "coronavirus", False),
        ("air", "airport", False),
        ("iran", "iraq", False),
    ],
)
def test_name_words_are_one_name_up_to_a_short_ending(a: str, b: str, same: bool) -> None:
    assert same_name_word(a, b) is same
