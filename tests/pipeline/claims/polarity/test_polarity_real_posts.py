"""The polarity check on wordings real tweets use for the claim they repeat (issue 29: the
CheckThat! 2022 train tweets whose right fact-check was demoted), and the reversals each such
allowance must still catch."""

from __future__ import annotations

import pytest

from pipeline.claims.polarity.compare import MismatchKind, compare


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        (
            "Target didn't allow purchases from Israel on its website.",
            "Target blocked Israel from shopping on its website.",
        ),
        (
            "They don't want Roosevelt to get re-elected again.",
            "Congress acted to prevent Roosevelt from being re-elected again.",
        ),
        (
            "Texas will deny birth certificates to children of undocumented parents.",
            "Texas will refuse birth certificates to children of undocumented parents.",
        ),
        (
            "The Trump family was disallowed from operating any charity in New York.",
            "The Trump family was banned from running charities in New York.",
        ),
    ],
)
def test_a_negated_wording_of_a_ban_or_a_prevention_repeats_the_claim(
    post: str, claim: str
) -> None:
    assert compare(post, claim) == []


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        (
            "All trans and non-binary New Yorkers can change the gender on their birth "
            "certificate.",
            "New Yorkers can select a gender-neutral option on their birth certificates.",
        ),
        (
            "The clowns will purge the night before Halloween, I can't wait to go clown hunting.",
            "Clowns are planning a purge night the night before Halloween.",
        ),
    ],
)
def test_a_non_prefix_or_cant_wait_denies_nothing(post: str, claim: str) -> None:
    assert MismatchKind.NEGATION not in {m.kind for m in compare(post, claim)}


def test_the_second_half_of_a_compound_asserts_no_predicate() -> None:
    post = "Japanese scientists found e-cigarettes contain ten times the cancer-causing agents."
    claim = "A Japanese study found e-cigarettes contain ten times as many carcinogens."
    assert MismatchKind.PREDICATE not in {m.kind for m in compare(post, claim)}


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        (
            "Target did not block Israel from its website.",
            "Target blocked Israel from its website.",
        ),
        (
            "Visitors are not prohibited from wearing tampons.",
            "Visitors are prohibited from wearing tampons.",
        ),
        ("The vaccine is not allowed in Texas.", "The vaccine is allowed in Texas."),
        (
            "Congress did not prevent Roosevelt from being re-elected.",
            "Congress prevented Roosevelt from being re-elected.",
        ),
    ],
)
def test_a_negated_ban_or_prevention_is_still_a_negation(post: str, claim: str) -> None:
    assert MismatchKind.NEGATION in {m.kind for m in compare(post, claim)}


# --- names: what real tweets shout, abbreviate and list (the entity rule) --------------------


def _entity(post: str, claim: str) -> list[str]:
    return [m.detail for m in compare(post, claim) if m.kind is MismatchKind.ENTITY]


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        # Shouted ordinary words are no names (WordNet's lower-case words).
        (
            "BUT OF COURSE, Obama endorses grandson of terrorist for congress.",
            "Former U.S. President Barack Obama endorsed the grandson of a terrorist.",
        ),
        (
            "UPDATE: Crews have restored the Hollywood sign, which read Hollyweed.",
            "Pranksters briefly changed California's Hollywood sign to read Hollyweed.",
        ),
        (
            "o my god i just heard that jill stein is anti vaccine NOPE",
            "Green Party presidential candidate Dr. Jill Stein opposes vaccines.",
        ),
        # A title written short does not end the sentence ("Sen." is no name of its own).
        (
            "Bernie Sanders compared Baltimore to a third world country, Fox reports.",
            "U.S. Sen. Bernie Sanders compared Baltimore to a third world country.",
        ),
        # A name added before a function word, a possessive, a first name of a name both have.
        (
            "USA: 4-year Old Boy Accused of Hacking FBI Database",
            "A 4-year-old boy was accused of hacking the FBI's databases.",
        ),
        (
            "FULL CONTEXT: Trump told @MSNBC there should be a punishment for women.",
            "Donald Trump said there should be a punishment for women.",
        ),
        # A number ends a name: "Today 10-3-16 Trump" is no "Today Trump".
        (
            "Today 10-3-16 Trump denigrates veterans with PTSD.",
            "Donald Trump denigrates veterans with PTSD.",
        ),
        # A headline's run of capitals around the same name names no one else.
        (
            "Bernie Sanders Publicly Attacks Nominee Over Religious Beliefs: Christianity is "
            "an insult to billions of Muslims.",
            "U.S. Sen. Bernie Sanders said Christianity is an insult to Muslims.",
        ),
    ],
)
def test_shouted_words_short_titles_and_fuller_names_are_no_other_name(
    post: str, claim: str
) -> None:
    assert _entity(post, claim) == []


@pytest.mark.parametrize(
    ("post", "claim"),
    [
        # A comma ends a name: "Bronx, New York" is two places, not "Bronx New York".
        (
            "An employee at a health center in Bronx, Rutgers University, told an activist "
            "she should dispose of a baby.",
            "An employee at a health center in Bronx, New York, told an activist she should "
            "dispose of a baby.",
        ),
        (
            "A Trump Tower hotel opened in Pyongyang, New York within a day of the summit.",
            "A Trump Tower hotel opened in Pyongyang, North Korea within a day of the summit.",
        ),
        # Shouted names stay names; a name written where the claim has a capitalised word.
        (
            "TRUMP SAYS Muslims should be made to wear identifying badges.",
            "Biden says Muslims should be made to wear identifying badges.",
        ),
        (
            "Bill Clinton fathered a son with an Why prostitute in 1985.",
            "Bill Clinton fathered a son with an Arkansas prostitute in 1985.",
        ),
        (
            "A video shows October Matter protesters in Charlotte beating a homeless vet.",
            "A video shows Black Lives Matter protesters in Charlotte beating a homeless vet.",
        ),
        (
            "Today 10-3-16 Biden denigrates veterans with PTSD.",
            "Donald Trump denigrates veterans with PTSD.",
        ),
        # A short name with a word in common still names someone else.
        (
            "Chelsea Clinton's 2010 wedding was paid for by the Beaver County.",
            "Chelsea Clinton's 2010 wedding was paid for by the Clinton Foundation.",
        ),
    ],
)
def test_swapped_names_are_still_seen(post: str, claim: str) -> None:
    assert compare(post, claim)
