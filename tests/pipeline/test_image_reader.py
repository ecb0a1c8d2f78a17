"""`ImageReader` on its own: what counts as a post with nothing but an unreadable image, how long
a description may get, how a fact-checked image becomes a known-claim match (and when it is
too old to be used), and how a quoted post's images are labelled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image as PILImage

from pipeline.claims import ClaimRecord, MatchStrength, usable_as_evidence
from pipeline.config import ClaimsConfig, FetchConfig, ImagesConfig
from pipeline.fetch import Fetcher
from pipeline.image_hash import MemoryImageStore
from pipeline.image_intake import decode
from pipeline.image_records import DescriptionSource, ImageReport
from pipeline.images import ImageReader, fact_check_image, unreadable_only
from pipeline.llm import CallLedger
from pipeline.ocr import get_ocr
from pipeline.prompts import CUT_MARK
from pipeline.ratings import Rating
from pipeline.records import Image, Post
from testing.image_samples import ALTERATIONS, encode, photo, sentence

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def post(text: str, *images: Image, **fields: object) -> Post:
    return Post.model_validate(
        {
            "id": "p",
            "author": "a",
            "text": text,
            "created_at": NOW,
            "images": [i.model_dump() for i in images],
            **fields,
        }
    )


def unread(number: int = 1) -> ImageReport:
    return ImageReport(owner="post", number=number, source="x.png", error="no text")


@pytest.mark.parametrize(
    ("text", "extra", "abstains"),
    [
        ("", {}, True),
        ("@factnote is this real? https://t.co/x", {}, True),  # fewer than 3 words of its own
        ("The mayor closed every school today", {}, False),
        (
            "",
            {"quoted": {"id": "q", "author": "b", "text": "Quoted words", "created_at": NOW}},
            False,
        ),
    ],
)
def test_only_a_post_with_no_words_of_its_own_abstains_on_an_unreadable_image(
    text: str, extra: dict[str, object], abstains: bool
) -> None:
    checked = post(text, Image(source="x.png"), **extra)
    assert (unreadable_only(checked, [unread()]) is not None) is abstains


def test_alt_text_or_one_readable_image_is_content_enough() -> None:
    with_alt = post("", Image(source="x.png", alt_text="A flooded street"))
    assert unreadable_only(with_alt, [unread()]) is None
    read = ImageReport(owner="post", number=2, source="y.png", described_by=DescriptionSource.OCR)
    assert unreadable_only(post("", Image(source="x.png")), [unread(), read]) is None


def reader(tmp_path: Path, **cfg: object) -> ImageReader:
    images = ImagesConfig.model_validate({"local_dir": str(tmp_path), **cfg})
    return ImageReader(
        images,
        Fetcher(FetchConfig()),
        store=MemoryImageStore(),
        ocr=get_ocr(images),
        max_chars=120,
    )


def test_a_long_text_in_an_image_is_cut_like_any_untrusted_item(tmp_path: Path) -> None:
    words = "Breaking news about the city budget and the schools and the roads " * 2
    (tmp_path / "long.png").write_bytes(encode(sentence(words.strip(), width=2400, size=40)))
    checked = post("", Image(source=str(tmp_path / "long.png")))
    result = reader(tmp_path).read_post(checked, CallLedger(), NOW)
    [image] = checked.images
    assert result.reports[0].described_by is DescriptionSource.OCR
    assert image.description is not None and image.description.endswith(CUT_MARK)
    assert len(image.description) <= 120 + len(CUT_MARK)
    assert image.text is not None and image.text.startswith("Breaking news about the city")


@pytest.mark.parametrize(("age_days", "usable"), [(30, True), (900, False)])
def test_a_fact_checked_image_is_a_strong_known_claim_until_it_is_too_old(
    tmp_path: Path, age_days: int, usable: bool
) -> None:
    original = photo("flower.jpg")
    record = ClaimRecord(
        claim_text="This flower grew in a nuclear zone.",
        review_url="https://fc.example/flower",
        rating=Rating.FALSE,
        review_date=NOW - timedelta(days=age_days),
    )
    taken = decode(encode(original, "JPEG"), ImagesConfig(), "https://fc.example/flower.jpg")
    read = reader(tmp_path)
    assert read.store is not None
    read.store.add(fact_check_image(taken, record, NOW - timedelta(days=age_days)))
    (tmp_path / "repost.png").write_bytes(encode(ALTERATIONS["resize 50%"](original)))
    result = read.read_post(
        post("wow", Image(source=str(tmp_path / "repost.png"))), CallLedger(), NOW
    )
    [match] = result.claim_matches
    assert match.record == record and match.strength is MatchStrength.STRONG
    assert match.score >= ClaimsConfig().strong_threshold
    assert match.possibly_outdated is not usable and usable_as_evidence(match) is usable
    assert match.query.startswith("post image 1 (pHash distance")


def test_a_quoted_posts_images_are_read_and_labelled_as_such(tmp_path: Path) -> None:
    blank = tmp_path / "blank.png"
    blank.write_bytes(encode(PILImage.new("RGB", (300, 200), "white")))
    quoted = {
        "id": "q",
        "author": "b",
        "text": "look",
        "created_at": NOW,
        "images": [{"source": str(blank)}],
    }
    result = reader(tmp_path).read_post(post("Is this true?", quoted=quoted), CallLedger(), NOW)
    [report] = result.reports
    assert report.owner == "quoted post"
    assert result.problems == [
        "quoted post image 1 not described: no text could be read in it and no vision model "
        "is configured"
    ]


def test_an_ocr_failure_is_recorded_and_the_image_is_unreadable_not_fatal(
    tmp_path: Path,
) -> None:
    (tmp_path / "strip.png").write_bytes(encode(PILImage.new("RGB", (2048, 4), "white")))
    result = reader(tmp_path).read_post(
        post("", Image(source=str(tmp_path / "strip.png"))), CallLedger(), NOW
    )
    [report] = result.reports
    assert report.ocr_error is not None and report.described_by is DescriptionSource.NONE
