"""`ImageReader` on its own: what counts as a post with nothing but an unreadable image, how long
a description may get, how a fact-checked image becomes a known-claim match (and when it is
too old to be used), and how a quoted post's images are labelled."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image as PILImage

from pipeline.claims.index import ClaimRecord, MatchStrength, usable_as_evidence
from pipeline.claims.ratings import Rating
from pipeline.config import ClaimsConfig, FetchConfig, ImagesConfig
from pipeline.images.embedding import get_image_embedder
from pipeline.images.intake import decode
from pipeline.images.ocr import get_ocr
from pipeline.images.phash import MemoryImageStore
from pipeline.images.reader import ImageReader, fact_check_image, text_agreement, unreadable_only
from pipeline.images.records import DescriptionSource, ImageReport
from pipeline.llm.client import CallLedger
from pipeline.llm.prompts import CUT_MARK
from pipeline.records import Image, Post
from pipeline.web.fetch import Fetcher
from testing.image_samples import (
    ALTERATIONS,
    encode,
    photo,
    repeated_scan_jpeg,
    screenshot,
    sentence,
)

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


# Older than `claims.max_age_days` (3,650: an evergreen claim; issue 29) is possibly outdated.
@pytest.mark.parametrize(("age_days", "usable"), [(30, True), (900, True), (4000, False)])
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


def embedding_reader(tmp_path: Path, **cfg: object) -> ImageReader:
    images = ImagesConfig.model_validate({"local_dir": str(tmp_path), "ocr": False, **cfg})
    return ImageReader(
        images,
        Fetcher(FetchConfig()),
        store=MemoryImageStore(),
        max_chars=120,
        embedder=get_image_embedder(images.embedding_side),
    )


def cropped_repost_of_a_fact_check(tmp_path: Path, read: ImageReader) -> Post:
    """A fact-checked photo in the store, and a post of it cropped to 75 % (pHash misses it)."""
    original = photo("china.jpg")
    record = ClaimRecord(
        claim_text="This palace burned down last week.",
        review_url="https://fc.example/palace",
        rating=Rating.FALSE,
        review_date=NOW - timedelta(days=3),
    )
    taken = decode(encode(original, "JPEG"), ImagesConfig(), "https://fc.example/palace.jpg")
    assert read.store is not None and read.embedder is not None
    read.store.add(fact_check_image(taken, record, NOW, embedder=read.embedder))
    (tmp_path / "crop.png").write_bytes(encode(ALTERATIONS["crop 75%"](original)))
    return post("wow", Image(source=str(tmp_path / "crop.png")))


def test_a_cropped_repost_of_a_fact_checked_photo_is_a_possible_match_for_moderators(
    tmp_path: Path,
) -> None:
    read = embedding_reader(tmp_path)
    result = read.read_post(cropped_repost_of_a_fact_check(tmp_path, read), CallLedger(), NOW)
    [report] = result.reports
    [match] = report.matches
    assert match.possible and match.fact_check_url == "https://fc.example/palace"
    assert match.distance > read.cfg.hash_distance
    assert match.similarity is not None and match.similarity >= read.cfg.embedding_threshold
    assert result.claim_matches == []  # not the ground of a templated reply
    [note] = result.notes
    assert note.startswith("post image 1 may be the image of the fact-check https://fc.example")
    assert "possible match" in note


def test_with_auto_match_an_embedding_hit_on_a_fact_checked_photo_is_a_known_claim(
    tmp_path: Path,
) -> None:
    read = embedding_reader(tmp_path, embedding_auto_match=True)
    result = read.read_post(cropped_repost_of_a_fact_check(tmp_path, read), CallLedger(), NOW)
    [match] = result.claim_matches
    assert match.record.review_url == "https://fc.example/palace"
    assert match.query.startswith("post image 1 (embedding 0.")
    assert not result.reports[0].matches[0].possible and result.notes == []


def test_every_image_read_is_remembered_with_its_embedding_and_our_jpeg_copy(
    tmp_path: Path,
) -> None:
    read = embedding_reader(tmp_path, copy_side=256)
    (tmp_path / "flower.png").write_bytes(encode(photo("flower.jpg")))
    result = read.read_post(
        post("wow", Image(source=str(tmp_path / "flower.png"))), CallLedger(), NOW
    )
    sha = result.reports[0].sha256
    assert isinstance(read.store, MemoryImageStore) and sha is not None
    [(stored, _)] = read.store.similar(
        read.embedder.embed(photo("flower.jpg")),  # type: ignore[union-attr]
        "efficientnet-lite0-imagenet",
        0.99,
    )
    assert stored.sha256 == sha
    copy = read.store.content(sha)
    assert copy is not None and copy.startswith(b"\xff\xd8\xff")
    with PILImage.open(io.BytesIO(copy)) as shown:
        assert max(shown.size) == 256 and not shown.getexif()


def screenshot_reader(tmp_path: Path, stored: PILImage.Image) -> ImageReader:
    """A reader with OCR and the embedding, and a fact-checked screenshot stored with the text
    OCR read in it."""
    read = embedding_reader(tmp_path, ocr=True)
    read.ocr = get_ocr(read.cfg)
    record = ClaimRecord(
        claim_text="A claim in a screenshot.",
        review_url="https://fc.example/shot",
        rating=Rating.FALSE,
    )
    taken = decode(encode(stored), ImagesConfig(), "https://fc.example/shot.png")
    assert read.store is not None
    read.store.add(fact_check_image(taken, record, NOW, embedder=read.embedder, ocr=read.ocr))
    return read


@pytest.mark.parametrize(
    ("stored", "by"),
    [
        # 14 pHash bits from the posted one, 0.91 alike to the embedding (it does not read).
        (("Daily Health", "@dh", ["5G spreads it"]), "embedding"),
        # 8 pHash bits apart: within the pHash distance (bench/image_similarity.py's pairs).
        (("Local News 24", "@ln24", ["Tap water banned", "from Monday"]), "pHash"),
    ],
)
def test_two_screenshots_of_one_template_saying_different_things_are_no_known_claim(
    tmp_path: Path, stored: tuple[str, str, list[str]], by: str
) -> None:
    read = screenshot_reader(tmp_path, screenshot(*stored))
    other = screenshot("World Report", "@worldrep", ["Moon landing staged", "says insider"])
    (tmp_path / "other.png").write_bytes(encode(other))
    result = read.read_post(post("", Image(source=str(tmp_path / "other.png"))), CallLedger(), NOW)
    [report] = result.reports
    assert "Moon landing staged" in report.ocr_text
    assert result.claim_matches == []
    if by == "pHash":  # shown to moderators as possible, saying why
        [match] = report.matches
        assert match.possible and match.similarity is None
        assert "the text in them differs" in result.notes[0]
    else:
        assert report.matches == [] and result.notes == []


def test_a_repost_of_a_fact_checked_screenshot_saying_the_same_is_a_known_claim(
    tmp_path: Path,
) -> None:
    lines = ["Tap water banned", "from Monday"]
    read = screenshot_reader(tmp_path, screenshot("Local News 24", "@ln24", lines))
    repost = ALTERATIONS["resize 50% + jpeg q60"](screenshot("Local News 24", "@ln24", lines))
    (tmp_path / "repost.png").write_bytes(encode(repost))
    result = read.read_post(post("", Image(source=str(tmp_path / "repost.png"))), CallLedger(), NOW)
    [match] = result.claim_matches
    assert match.record.review_url == "https://fc.example/shot"
    assert not result.reports[0].matches[0].possible


def test_text_agreement_reads_past_ocr_noise_and_a_cropped_line_but_not_other_words() -> None:
    threshold = ImagesConfig().text_agreement
    shot = "Local News 24\n@ln24\nTap water banned\nfrom Monday\n10:42 AM - Nov 3, 2026"
    cropped = "ocal News 24\nTap water banned\nfrom Monday"  # a line and a letter cut off
    other = "World Report\n@worldrep\nMoon landing staged\nsays insider\n10:42 AM - Nov 3, 2026"
    same = text_agreement(shot, cropped, 4)
    assert same is not None and same >= threshold
    differs = text_agreement(shot, other, 4)
    assert differs is not None and differs < threshold
    assert text_agreement(shot, "鑫", 4) is None  # one side has no text: no say


def test_a_hostile_jpeg_is_recorded_unreadable_and_the_next_image_is_still_read(
    tmp_path: Path,
) -> None:
    # A progressive JPEG repeating one small scan (issue 33): refused, with its reason, and the
    # post's other image is read as usual.
    (tmp_path / "hostile.jpg").write_bytes(repeated_scan_jpeg(1000))
    (tmp_path / "words.png").write_bytes(encode(sentence("Schools closed today")))
    checked = post(
        "", Image(source=str(tmp_path / "hostile.jpg")), Image(source=str(tmp_path / "words.png"))
    )
    result = reader(tmp_path).read_post(checked, CallLedger(), NOW)
    hostile, words = result.reports
    assert hostile.error is not None and "a JPEG of 1,010 scans" in hostile.error
    assert words.described_by is DescriptionSource.OCR
