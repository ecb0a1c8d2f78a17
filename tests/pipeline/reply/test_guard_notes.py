"""The Community Notes rules of the guard, against the disguises an outside tester got past
them (issue 33, finding 7): a scheme-less only source, a full-width hashtag, the boilerplate
with odd spaces or a Cyrillic letter, and a note of nothing but a URL."""

from __future__ import annotations

import pytest

from pipeline.config import GuardConfig
from pipeline.records import Platform, ProblemCode
from pipeline.reply.guard import check_text

URL = "https://who.int/news/flu"


def codes(text: str, evidence: tuple[str, ...] = (URL,)) -> list[ProblemCode]:
    report = check_text(text, Platform.NOTES, evidence_urls=evidence, cfg=GuardConfig())
    return [p.code for p in report.problems]


def test_a_plain_note_with_an_https_source_passes() -> None:
    assert codes(f"The WHO says lemon water does not cure flu: {URL}") == []


@pytest.mark.parametrize(
    "source", ["who.int/news/flu", "www.who.int/news/flu", "HTTPS://who.int/x"]
)
def test_a_note_whose_only_source_has_no_http_scheme_is_refused(source: str) -> None:
    found = codes(f"The WHO says lemon water does not cure flu: {source}", (f"https://{source}",))
    assert ProblemCode.NOTES_NEED_URL in found


def test_one_https_source_is_enough_beside_a_bare_host() -> None:
    text = f"Lemon water does not cure flu (who.int): {URL}"
    assert ProblemCode.NOTES_NEED_URL not in codes(text, (URL, "https://who.int"))


@pytest.mark.parametrize("tag", ["#flu", "\uff03flu", "\uff03\uff46\uff4c\uff55"])
def test_hashtags_are_refused_full_width_too(tag: str) -> None:
    assert ProblemCode.NOTES_HASHTAG in codes(f"Lemon water does not cure {tag}: {URL}")


@pytest.mark.parametrize(
    "opening",
    [
        "This post is false",
        "This  post is false",  # two spaces
        "This\u00a0post is false",  # no-break space
        "This post is f\u0430lse",  # Cyrillic а
        "Th\u0456s tweet was misleading",  # Cyrillic і
        "This\tpost\u2003is false",  # a tab and an em space
    ],
)
def test_the_this_post_is_false_opening_is_refused_however_it_is_spaced_or_spelt(
    opening: str,
) -> None:
    assert ProblemCode.NOTES_BOILERPLATE in codes(f"{opening}. Lemon water cures nothing: {URL}")


@pytest.mark.parametrize("text", [URL, f"{URL} {URL}/more", f"  {URL} — ({URL}) "])
def test_a_note_of_only_urls_is_refused(text: str) -> None:
    assert ProblemCode.NOTES_URL_ONLY in codes(text)


def test_other_platforms_keep_their_rules() -> None:
    report = check_text(URL, Platform.X, evidence_urls=[URL], cfg=GuardConfig())
    assert report.valid
