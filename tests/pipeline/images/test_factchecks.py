"""Fact-check images at import: the image URLs a ClaimReview carries, taken in through the
SSRF-guarded intake from a local HTTP server, remembered with their fact-check, and a later
repost of the picture then a known claim.

The ClaimReview markup is shaped after schema.org's ClaimReview and Claim (itemReviewed is a
Claim; `image` is Thing.image, a URL or an ImageObject; `appearance`/`firstAppearance` are
CreativeWorks, here ImageObjects with `contentUrl`): https://schema.org/ClaimReview,
https://schema.org/Claim, https://schema.org/ImageObject."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.claims.claimreview import image_urls, read_jsonld
from pipeline.config import FetchConfig, ImagesConfig
from pipeline.images.factchecks import store_fact_check_images
from pipeline.images.phash import MemoryImageStore
from pipeline.images.reader import ImageReader
from pipeline.llm.client import CallLedger
from pipeline.records import Image, Post
from pipeline.web.fetch import Fetcher
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.image_samples import ALTERATIONS, encode, photo

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
CFG = ImagesConfig(embedding=False, ocr=False)  # pHash is enough to find a resized repost


def review(**fields: Any) -> dict[str, Any]:
    return {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": "https://checkers.example/fact-check/flower",
        "claimReviewed": "This flower grew near a nuclear plant.",
        "datePublished": "2026-11-01",
        "reviewRating": {"@type": "Rating", "alternateName": "False"},
        **fields,
    }


def test_the_claims_image_its_image_appearances_and_the_reviews_image_are_read() -> None:
    item = {
        "@type": "Claim",
        "image": "https://a.example/claim.jpg",
        "firstAppearance": {"@type": "ImageObject", "contentUrl": "https://a.example/first.png"},
        "appearance": [
            {"@type": "SocialMediaPosting", "url": "https://social.example/post/1"},
            {"@type": "ImageObject", "url": "https://a.example/seen.webp"},
            {"@type": "ImageObject", "contentUrl": "javascript:alert(1)"},
        ],
    }
    node = review(
        itemReviewed=item, image={"@type": "ImageObject", "url": "https://fc.example/h.jpg"}
    )
    assert image_urls(node, item) == [
        "https://a.example/claim.jpg",
        "https://a.example/first.png",
        "https://a.example/seen.webp",
        "https://fc.example/h.jpg",
    ]
    assert image_urls(review(), {}) == []


def test_each_review_keeps_its_image_urls_by_record_key() -> None:
    result = read_jsonld(review(image="https://fc.example/flower.jpg"))
    [record] = result.records
    assert result.images == {record.key: ["https://fc.example/flower.jpg"]}


def serve_flower(server: LocalHTTPServer) -> str:
    server.add(
        "/flower.jpg", Route(body=encode(photo("flower.jpg"), "JPEG"), content_type="image/jpeg")
    )
    server.add("/page.jpg", Route(body=b"<html>not an image</html>", content_type="image/jpeg"))
    return server.url("/flower.jpg")


def test_imported_fact_check_images_make_a_later_repost_a_known_claim(tmp_path: Path) -> None:
    store = MemoryImageStore()
    with LocalHTTPServer() as server, Fetcher(FetchConfig(allow_hosts=["127.0.0.1"])) as fetcher:
        flower = serve_flower(server)
        result = read_jsonld(review(image=[flower, server.url("/page.jpg")]))
        taken = store_fact_check_images(result.records, result.images, fetcher, CFG, store, now=NOW)
    assert taken.stored == 1 and len(store) == 1
    [failure] = taken.failures
    assert failure.startswith("image of https://checkers.example/fact-check/flower: ")
    assert "not a PNG, JPEG, GIF or WebP" in failure

    repost = tmp_path / "repost.png"
    repost.write_bytes(encode(ALTERATIONS["resize 50%"](photo("flower.jpg"))))
    reader = ImageReader(
        CFG.model_copy(update={"local_dir": str(tmp_path)}), Fetcher(FetchConfig()), store=store
    )
    checked = Post(
        id="p", author="a", text="wow", created_at=NOW, images=[Image(source=str(repost))]
    )
    found = reader.read_post(checked, CallLedger(), NOW)
    [match] = found.claim_matches
    assert match.record.review_url == "https://checkers.example/fact-check/flower"
    assert found.reports[0].matches[0].fact_check_url == match.record.review_url


def test_fact_check_images_get_the_ssrf_refusals() -> None:
    store = MemoryImageStore()
    with LocalHTTPServer() as server, Fetcher(FetchConfig()) as fetcher:
        result = read_jsonld(review(image=serve_flower(server)))
        taken = store_fact_check_images(result.records, result.images, fetcher, CFG, store)
        assert server.hits("/flower.jpg") == 0
    assert taken.stored == 0 and len(store) == 0
    [failure] = taken.failures
    assert "ssrf: refused 127.0.0.1 (loopback)" in failure
