"""The polarity check: each kind of reversal is found, rewordings are left alone."""

from __future__ import annotations

import pytest

from pipeline.polarity import MismatchKind, compare, entities, negation_cues, quantities

CLAIM = "The COVID-19 vaccines are safe for pregnant women."


def kinds(post: str, claim: str) -> set[MismatchKind]:
    return {m.kind for m in compare(post, claim)}


@pytest.mark.parametrize(
    "post",
    [
        "The COVID-19 vaccines are not safe for pregnant women.",
        "The COVID-19 vaccines aren't safe for pregnant women.",
        "The COVID-19 vaccines are never safe for pregnant women.",
        "The COVID-19 vaccines are no longer safe for pregnant women.",
        "It is not true that the COVID-19 vaccines are safe for pregnant women.",
        "It is false that the COVID-19 vaccines are safe for pregnant women.",
        "Die COVID-19-Impfstoffe sind nicht sicher für Schwangere.",
    ],
)
def test_a_negated_claim_is_a_negation_mismatch(post: str) -> None:
    assert MismatchKind.NEGATION in kinds(post, CLAIM)


def test_a_negation_of_a_negated_claim_is_found_both_ways() -> None:
    denied = "Vaccines do not cause autism."
    assert MismatchKind.NEGATION in kinds("Vaccines cause autism.", denied)
    assert MismatchKind.NEGATION in kinds(denied, "Vaccines cause autism.")


def test_two_negations_cancel() -> None:
    post = "It is not true that the COVID-19 vaccines are not safe for pregnant women."
    assert MismatchKind.NEGATION not in kinds(post, CLAIM)


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        ("Wind turbines kill fewer birds than cats.", "Wind turbines kill more birds than cats."),
        ("China is the smallest emitter of CO2.", "China is the largest emitter of CO2."),
        ("Inflation decreased to 10 percent.", "Inflation increased to 10 percent."),
        ("Sea levels are falling.", "Sea levels are rising."),
        ("The vaccines are dangerous for pregnant women.", CLAIM),
        ("Masks are ineffective against the virus.", "Masks are effective against the virus."),
        ("Vitamin C causes colds.", "Vitamin C prevents colds."),
        ("Canada banned cannabis in 2018.", "Canada legalised cannabis in 2018."),
        (
            "Nicotine could prevent more harm than it prevents.",
            "Nicotine could cause more harm than it prevents.",
        ),
    ],
)
def test_an_antonym_swap_is_an_antonym_mismatch(post: str, claim: str) -> None:
    assert MismatchKind.ANTONYM in kinds(post, claim)


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        ("Unemployment fell to 8 percent in 2023.", "Unemployment fell to 11 percent in 2023."),
        ("France banned petrol cars from 2040.", "France banned petrol cars from 2025."),
        ("The rate will reach 20,000 pounds.", "The rate will reach 15,000 pounds."),
        ("Goldfish remember for ten seconds.", "Goldfish remember for three seconds."),
        ("The emergency ended in March 2023.", "The emergency ended in May 2023."),
        ("The Amazon produces 50% of our oxygen.", "The Amazon produces 20% of our oxygen."),
    ],
)
def test_a_changed_number_or_date_is_a_number_mismatch(post: str, claim: str) -> None:
    assert MismatchKind.NUMBER in kinds(post, claim)


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        ("Donald Trump signed a law banning TikTok.", "Joe Biden signed a law banning TikTok."),
        ("India is the largest emitter of CO2.", "China is the largest emitter of CO2."),
        ("The CDC ended the emergency.", "The WHO ended the emergency."),
        ("Peru recorded its lowest deforestation.", "Brazil recorded its lowest deforestation."),
        (
            "Obama's team was quarantined in Lebanon.",
            "The Algerian team was quarantined in Lebanon.",
        ),
    ],
)
def test_a_swapped_named_entity_is_an_entity_mismatch(post: str, claim: str) -> None:
    assert MismatchKind.ENTITY in kinds(post, claim)


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        ("Hot water with lemon destroys influenza viruses.", "Lemon water kills the flu virus."),
        (
            "Spain's jobless rate dropped to 11% in 2023.",
            "Unemployment in Spain fell to 11 percent in 2023.",
        ),
        ("The rate goes to 15000 from 8000.", "The rate will move from 8,000 to 15,000 pounds."),
        ("2 million people left.", "2,000,000 people left."),
        ("Lebanese passports are for sale.", "Lebanon sells passports."),
        ("The US left the WHO.", "The United States left the WHO."),
        ("Vaccines do not cause autism.", "Vaccines don't cause autism."),
        ("Sales fell again.", "Sales declined again."),
        ("Covid jabs pose no special risk.", "Covid jabs are not a special risk."),
        ("Hoda Al-Sarari has died in Spain.", "Hoda Al-Sarari passed away in Spain."),
        ("President Biden signed it.", "Joe Biden signed it."),
        ("Wearing a mask cuts your oxygen.", "Face masks lower the oxygen you breathe."),
        ("Lightning does not hit one spot two times.", "Lightning never strikes one spot twice."),
    ],
)
def test_a_rewording_is_no_mismatch(post: str, claim: str) -> None:
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
