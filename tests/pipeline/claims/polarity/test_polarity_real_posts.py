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
