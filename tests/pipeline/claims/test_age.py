"""The age rule: evergreen claims against claims tied to a moment (`pipeline.claims.age`)."""

from __future__ import annotations

from pipeline.claims.age import possibly_outdated, time_marker
from pipeline.config import ClaimsConfig


def test_claims_tied_to_a_moment_are_time_bound() -> None:
    assert time_marker("Mail-in ballots will not be counted in the election") == "ballots"
    assert time_marker("Covid deaths so far this week are 3,000") == "deaths"
    assert time_marker("The bridge is currently closed") == "currently"


def test_a_dated_event_and_a_hoax_are_evergreen() -> None:
    assert time_marker("In November 2012, Donald Trump tweeted that the Dow would drop") is None
    assert time_marker("Candy canes were created as Christian symbols") is None


def test_undated_is_always_outdated_and_limits_follow_the_kind() -> None:
    cfg = ClaimsConfig(max_age_days=3650, time_bound_max_age_days=90)
    assert possibly_outdated(None, "Candy canes were created as symbols", cfg)
    assert not possibly_outdated(3000, "Candy canes were created as symbols", cfg)
    assert possibly_outdated(4000, "Candy canes were created as symbols", cfg)
    assert possibly_outdated(120, "The polls close early this week", cfg)
    assert not possibly_outdated(30, "The polls close early this week", cfg)
