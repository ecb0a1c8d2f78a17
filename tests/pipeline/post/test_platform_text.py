"""Platform boilerplate removed before the polarity rules read a post
(`pipeline.post.platform_text`).

The shapes are those of tweets as web pages embed them (the CheckThat! 2022 Task 2A README
describes the signature "— Name (@handle) Month D, YYYY" and `pic.twitter.com/…` links)."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.claims.multilingual import reliable_language
from pipeline.post.platform_text import fold_quotes, posted_date, strip_boilerplate

EMBED = (
    "The US drone attack on #Soleimani caught on camera.#IranUsapic.twitter.com/TvRkHvlgby "
    "— Olaudah Equiano® (@RealOlaudah) January 6, 2020"
)


def test_an_embed_signature_media_links_and_handles_are_removed() -> None:
    assert strip_boilerplate(EMBED) == "The US drone attack on soleimani caught on camera. iran usa"
    assert strip_boilerplate("Read this https://t.co/abc bit.ly/xyz now @someone") == (
        "Read this now"
    )
    assert strip_boilerplate("pic.twitter.com/abc — A (@a) May 1, 2019") == ""


def test_the_signature_gives_the_posting_date_even_with_a_cut_year_missing() -> None:
    assert posted_date(EMBED) == datetime(2020, 1, 6, tzinfo=UTC)
    assert posted_date("No signature here, January 6, 2020 is in the text.") is None
    assert posted_date("Text — Barack Obama (@BarackObama) October 04, 19") is None


def test_curly_and_straight_apostrophes_are_one() -> None:
    assert fold_quotes("I’ll say “no”") == 'I\'ll say "no"'


def test_a_language_guess_on_too_little_text_is_no_guess() -> None:
    assert reliable_language("Obama wears a wire") is None  # py3langid: 'pcm', 0.28
    assert reliable_language("Die Impfung ist gefährlich für kleine Kinder") == "de"
    # 0.78 sure of English: under the bar, so unknown, which is never "another language".
    assert reliable_language("A video shows a 10-month-old baby drawing cartoons.") is None
    long_english = "The government announced that all schools will remain closed this month."
    assert reliable_language(long_english) == "en"
