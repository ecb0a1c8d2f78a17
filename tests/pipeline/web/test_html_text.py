"""Extraction turns page bodies into Documents: main text, title, and a date from metadata only."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest

from pipeline.web.html_text import (
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    UnsupportedContentType,
    count_words,
    decode_body,
    extract_document,
    parse_content_type,
    parse_date,
)
from tests.pages import FIXTURE_PAGES


def _page(name: str) -> bytes:
    return (FIXTURE_PAGES / name).read_bytes()


def _html(name: str) -> str:
    return _page(name).decode("utf-8")


@pytest.mark.parametrize(
    ("name", "title", "published", "source"),
    [
        (
            "meta_published.html",
            "City council approves new water treatment plant",
            datetime(2024, 3, 5, 13, 30, tzinfo=UTC),  # 14:30+01:00
            "meta:article:published_time",
        ),
        (
            "jsonld_published.html",
            "Study finds no link between the vaccine and hair loss",
            datetime(2023, 11, 20, 8, 15, tzinfo=UTC),
            "json-ld:datePublished",
        ),
        (
            "time_element.html",
            "Drought forces farmers to cut wheat planting",
            datetime(2022, 6, 1, tzinfo=UTC),  # a bare date is midnight UTC
            "time-element",
        ),
        (
            "latin1.html",
            "Les élèves répètent la pièce de théâtre",
            datetime(2021, 9, 14, tzinfo=UTC),
            "meta:date",
        ),
    ],
)
def test_extracts_title_and_publication_date_from_each_metadata_form(
    name: str, title: str, published: datetime, source: str
) -> None:
    doc = extract_document(f"https://news.example.org/{name}", _page(name))
    assert doc.ok
    assert doc.title == title
    assert doc.published == published
    assert doc.published is not None and doc.published.tzinfo is not None
    assert doc.date_source == source


def test_main_text_keeps_the_article_and_drops_boilerplate() -> None:
    doc = extract_document("https://gazette.example/council", _page("meta_published.html"))
    assert "We have patched this system for two decades" in doc.text
    assert "first in June" in doc.text  # last paragraph of the article
    for boilerplate in (
        "Subscribe now",
        "cookie policy",
        "Sign up for our free newsletter",
        "riverfan88",
        "Bridge repairs delayed",
        "Privacy policy",
    ):
        assert boilerplate not in doc.text
    assert 230 <= doc.word_count <= 260


def test_dateless_page_gets_no_date_from_dates_in_its_text() -> None:
    html = _html("dateless.html").replace(
        "Compliance is supported", "Last reviewed 2023-05-01. Updated 05/03/2021. Compliance is"
    )
    doc = extract_document("https://reference.example/montreal-protocol", html)
    assert "16 September 1987" in doc.text
    assert doc.published is None
    assert doc.date_source is None


def test_date_in_url_path_is_used_when_metadata_has_none() -> None:
    doc = extract_document("https://news.example/2020/01/15/story", _html("dateless.html"))
    assert doc.published == datetime(2020, 1, 15, tzinfo=UTC)
    assert doc.date_source == "url"


def test_final_url_rather_than_requested_url_gives_canonical_url_and_url_date() -> None:
    doc = extract_document(
        "https://short.example/x",
        _html("dateless.html"),
        final_url="https://www.news.example/2019/07/04/story/?utm_source=feed",
    )
    assert doc.url == "https://short.example/x"
    assert doc.canonical_url == "https://news.example/2019/07/04/story"
    assert doc.published == datetime(2019, 7, 4, tzinfo=UTC)


def test_modification_date_is_a_fallback_with_its_own_source() -> None:
    html = _html("dateless.html").replace(
        "</head>", '<meta property="article:modified_time" content="2022-02-02T10:00:00Z"></head>'
    )
    doc = extract_document("https://reference.example/p", html)
    assert doc.published == datetime(2022, 2, 2, 10, tzinfo=UTC)
    assert doc.date_source == "meta:article:modified_time"


def test_publication_meta_wins_over_modification_meta() -> None:
    doc = extract_document("https://gazette.example/council", _page("meta_published.html"))
    assert doc.published == datetime(2024, 3, 5, 13, 30, tzinfo=UTC)  # not the 6 March update


def test_json_ld_prefers_the_article_over_other_objects() -> None:
    html = _html("dateless.html").replace(
        "</head>",
        """<script type="application/ld+json">[
        {"@type": "WebSite", "datePublished": "2001-01-01"},
        {"@type": ["ReportageNewsArticle"], "datePublished": "2021-04-05T06:07:08-04:00"}
        ]</script></head>""",
    )
    doc = extract_document("https://reference.example/p", html)
    assert doc.published == datetime(2021, 4, 5, 10, 7, 8, tzinfo=UTC)
    assert doc.date_source == "json-ld:datePublished"


def test_broken_json_ld_is_skipped_for_the_next_source() -> None:
    html = _html("time_element.html").replace(
        "</head>",
        '<script type="application/ld+json">{"datePublished": "2020-01-01",}</script></head>',
    )
    doc = extract_document("https://plains.example/drought", html)
    assert doc.date_source == "time-element"
    assert doc.published == datetime(2022, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "block",
    [
        "[" * 100_000 + "]" * 100_000,  # RecursionError inside json.loads
        '{"datePublished": "2020-01-01", "n": ' + "9" * 5000 + "}",  # int over 4,300 digits
        '{"@type": "NewsArticle", "datePublished": "9999-12-31T23:00:00-05:00"}',
    ],
)
def test_hostile_json_ld_gives_no_date_and_the_page_is_still_read(block: str) -> None:
    html = _html("time_element.html").replace(
        "</head>", f'<script type="application/ld+json">{block}</script></head>'
    )
    doc = extract_document("https://plains.example/drought", html)
    assert doc.ok and doc.text
    assert doc.date_source == "time-element"


def test_a_megabyte_title_is_cut() -> None:
    article = "<p>" + "Some words of the article here. " * 30 + "</p>"
    html = f"<html><head><title>{'Huge ' * 200_000}</title></head><body>{article}</body></html>"
    doc = extract_document("https://huge.example/", html)
    assert doc.title.startswith("Huge Huge")
    assert len(doc.title) <= MAX_TITLE_CHARS


def test_plain_text_is_kept_as_is_without_a_date() -> None:
    body = _page("plain.txt")
    doc = extract_document("https://town.example/notice.txt", body, "text/plain")
    assert doc.ok
    assert doc.content_type == "text/plain"
    assert doc.text == body.decode("utf-8").strip()
    assert doc.title == "Notice to residents"
    assert doc.published is None
    assert doc.date_source is None
    assert doc.word_count == 64


def test_caller_given_date_overrides_and_is_recorded_as_given() -> None:
    given = datetime(2020, 5, 1, 12, 0, tzinfo=UTC)
    doc = extract_document(
        "file:///notes/notice.txt", _page("plain.txt"), "text/plain", published=given
    )
    assert doc.published == given
    assert doc.date_source == "given"


def test_under_100_word_page_reports_its_word_count() -> None:
    doc = extract_document("https://roads.example/landslide", _page("short.html"))
    assert doc.ok
    assert doc.word_count == 37
    assert doc.text.startswith("Road closed after landslide")


def test_content_hash_is_sha256_of_extracted_text_and_stable() -> None:
    first = extract_document("https://a.example/x", _page("jsonld_published.html"))
    second = extract_document("https://b.example/y", _page("jsonld_published.html"))
    assert first.content_hash == hashlib.sha256(first.text.encode("utf-8")).hexdigest()
    assert first.content_hash == second.content_hash
    other = extract_document("https://a.example/z", _page("time_element.html"))
    assert other.content_hash != first.content_hash


def test_huge_page_text_is_capped() -> None:
    paragraphs = "".join(
        "<p>" + " ".join(f"w{p}x{i}" for i in range(200)) + ".</p>\n" for p in range(250)
    )
    html = (
        f"<html><head><title>Huge</title></head><body><article>{paragraphs}</article></body></html>"
    )
    doc = extract_document("https://huge.example/", html)
    assert len(doc.text) == MAX_TEXT_CHARS
    assert doc.content_hash == hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    assert doc.word_count == count_words(doc.text)


def test_latin1_bytes_are_decoded_by_meta_charset() -> None:
    raw = _page("latin1.html")
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    doc = extract_document("https://lycee.example/theatre", raw, "text/html")
    assert "répètent depuis la rentrée" in doc.text


def test_declared_charset_is_used_for_bytes() -> None:
    body = "<html><body><p>Ça coûte très cher, déclare-t-il.</p></body></html>".encode("cp1252")
    doc = extract_document("https://x.example/", body, "text/html; charset=windows-1252")
    assert "Ça coûte très cher" in doc.text


def test_decode_body_detects_undeclared_utf8_and_never_raises() -> None:
    assert decode_body("naïve café".encode()) == "naïve café"
    assert isinstance(decode_body(b"\xff\xfe\x00garbage\x80\x81", "no-such-codec"), str)


def test_unsupported_content_type_is_refused() -> None:
    with pytest.raises(UnsupportedContentType, match="application/pdf"):
        extract_document("https://x.example/r.pdf", _page("report.pdf"), "application/pdf")


def test_empty_html_gives_an_empty_document() -> None:
    doc = extract_document("https://x.example/", "")
    assert doc.ok
    assert doc.text == ""
    assert doc.word_count == 0
    assert doc.published is None


def test_xhtml_with_xml_declaration_is_extracted() -> None:
    xhtml = '<?xml version="1.0" encoding="utf-8"?>\n' + _html("short.html").replace(
        "<!DOCTYPE html>", ""
    )
    doc = extract_document("https://x.example/", xhtml, "application/xhtml+xml")
    assert doc.content_type == "application/xhtml+xml"
    assert doc.word_count == 37
    assert doc.published == datetime(2024, 1, 10, 7, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-05T14:30:00+01:00", datetime(2024, 3, 5, 13, 30, tzinfo=UTC)),
        ("2024-03-05T14:30:00Z", datetime(2024, 3, 5, 14, 30, tzinfo=UTC)),
        ("2024-03-05T14:30:00", datetime(2024, 3, 5, 14, 30, tzinfo=UTC)),
        ("2024-03-05", datetime(2024, 3, 5, tzinfo=UTC)),
        ("Tue, 05 Mar 2024 14:30:00 GMT", datetime(2024, 3, 5, 14, 30, tzinfo=UTC)),
        ("2024-03-05T14:30:00.000+0100 (CET)", datetime(2024, 3, 5, 13, 30, tzinfo=UTC)),
        ("2024-03-05 (approx.)", datetime(2024, 3, 5, tzinfo=UTC)),
        ("2024-13-45", None),
        ("yesterday", None),
        ("", None),
        ("0001-01-01", None),
        # Past the last datetime once moved to UTC: no date, not an OverflowError.
        ("9999-12-31T23:00:00-05:00", None),
        ("Fri, 31 Dec 9999 23:00:00 -0500", None),
    ],
)
def test_parse_date_returns_utc_or_none(value: str, expected: datetime | None) -> None:
    assert parse_date(value) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hello world", 2),
        ("It's a well-known fact.", 4),
        ("  spaced\n\nout\ttext  ", 3),
        ("東京都", 3),
        ("", 0),
    ],
)
def test_count_words(text: str, words: int) -> None:
    assert count_words(text) == words


def test_parse_content_type_splits_media_and_charset() -> None:
    assert parse_content_type('Text/HTML; Charset="UTF-8"') == ("text/html", "utf-8")
    assert parse_content_type("text/plain") == ("text/plain", None)
    assert parse_content_type(None) == ("", None)
