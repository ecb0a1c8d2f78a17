"""The review app shows a post's images from our stored copy (never the original URL), with the
text read in each and its matches; the copy is served by sha256 with a Content-Type sniffed from
its bytes and `Content-Security-Policy: default-src 'none'`."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from sqlalchemy import select

from pipeline.config import ImagesConfig
from pipeline.images.intake import decode
from pipeline.images.records import ImageMatch, ImageReport, OcrLine, Recognition, SeenImage
from storage.images import SqlImageStore
from storage.models import DecisionRow
from testing.image_samples import encode, photo
from tests.bot.web.app_env import AppEnv, Session

ORIGINAL = "https://cdn.example/uploads/palace.jpg?sig=abc"
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def store_image(app_env: AppEnv, content: bytes | None) -> str:
    """A post image as the pipeline leaves it: remembered with our copy, and its report in the
    request's latest decision trace (with OCR text and a possible fact-check match)."""
    taken = decode(encode(photo("china.jpg"), "JPEG"), ImagesConfig(), ORIGINAL)
    SqlImageStore(app_env.db).add(
        SeenImage(
            sha256=taken.sha256,
            phash="8f373714acfcf4d0",
            source=ORIGINAL,
            seen_at=NOW,
            content=content,
        )
    )
    report = ImageReport(
        owner="post",
        number=1,
        source=ORIGINAL,
        sha256=taken.sha256,
        format="JPEG",
        ocr=[OcrLine(text="PALACE ON FIRE <script>", score=0.95)],
        matches=[
            ImageMatch(
                sha256="b" * 64,
                source="https://fc.example/palace.jpg",
                distance=26,
                fact_check_url="https://fc.example/palace-fire",
                rating="False",
                similarity=0.93,
                possible=True,
            )
        ],
        recognition="google_vision: 1 kept, 0 under the score floor dropped",
        recognised=[
            Recognition(service="google_vision", kind="landmark", name="Gate <b>", score=0.87)
        ],
    )
    rid = app_env.world.ids["review_local"]
    with app_env.db.session() as session:
        decision = session.scalars(
            select(DecisionRow).where(DecisionRow.request_id == rid).order_by(DecisionRow.id.desc())
        ).first()
        assert decision is not None
        decision.trace = {**decision.trace, "images": [report.model_dump(mode="json")]}
        session.commit()
    return taken.sha256


def test_the_item_page_shows_our_copy_its_text_and_its_matches(
    app_env: AppEnv, moderator: Session
) -> None:
    copy = decode(encode(photo("china.jpg"), "JPEG"), ImagesConfig()).jpeg(512)
    sha = store_image(app_env, copy)
    page = moderator.client.get(f"/requests/{app_env.world.ids['review_local']}")
    assert page.status_code == 200
    assert f'<img src="/images/{sha}"' in page.text
    assert f'src="{ORIGINAL}' not in page.text and 'src="https://cdn' not in page.text
    assert "PALACE ON FIRE &lt;script&gt;" in page.text  # OCR text is data, escaped
    assert "Possible match (compare by eye)" in page.text
    assert "https://fc.example/palace-fire" in page.text and "cosine 0.93" in page.text
    assert "Recognition: google_vision: 1 kept" in page.text
    assert "landmark Gate &lt;b&gt; (score 0.87, google_vision)" in page.text

    served = moderator.client.get(f"/images/{sha}")
    assert served.status_code == 200 and served.content == copy
    assert served.headers["content-type"] == "image/jpeg"
    assert served.headers["content-security-policy"] == "default-src 'none'"
    assert served.headers["x-content-type-options"] == "nosniff"


def test_an_image_without_a_stored_copy_is_named_not_hot_linked(
    app_env: AppEnv, moderator: Session
) -> None:
    sha = store_image(app_env, None)
    page = moderator.client.get(f"/requests/{app_env.world.ids['review_local']}")
    assert "No stored copy" in page.text and "<img src=" not in page.text
    assert moderator.client.get(f"/images/{sha}").status_code == 404


def test_unknown_malformed_or_non_image_content_is_not_served(
    app_env: AppEnv, moderator: Session
) -> None:
    html = b"<html><script>alert(1)</script></html>"
    sha = hashlib.sha256(html).hexdigest()
    SqlImageStore(app_env.db).add(
        SeenImage(sha256=sha, phash="0" * 16, source="x", seen_at=NOW, content=html)
    )
    assert moderator.client.get(f"/images/{sha}").status_code == 404
    assert moderator.client.get(f"/images/{'c' * 64}").status_code == 404
    assert moderator.client.get("/images/..%2Fetc%2Fpasswd").status_code == 404


def test_images_need_a_signed_in_user(app_env: AppEnv) -> None:
    sha = store_image(app_env, decode(encode(photo("china.jpg")), ImagesConfig()).jpeg(256))
    response = app_env.client().get(f"/images/{sha}", follow_redirects=False)
    assert response.status_code in (303, 401, 403)
    assert not response.headers.get("content-type", "").startswith("image/")
