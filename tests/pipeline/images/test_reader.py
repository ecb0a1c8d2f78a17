"""Images in a check: read offline (OCR) or by the vision endpoint on our own JPEG copy, the
decision saying which; an image-only post nobody can read abstains; a repost of an image a
fact-check carries is a known claim. The model's side is the local fake OpenAI server."""

from __future__ import annotations

import base64
import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from PIL import Image as PILImage
from pydantic import SecretStr

from pipeline.check import Checker
from pipeline.claims.index import ClaimRecord
from pipeline.claims.ratings import Rating
from pipeline.config import CredibilityConfig, FetchConfig, ImagesConfig, PipelineConfig
from pipeline.images.phash import SeenImage, phash
from pipeline.images.records import DescriptionSource
from pipeline.images.reverse_search import LensSearch
from pipeline.records import DecisionStatus, Image, Platform, Post, Verdict
from pipeline.shared_parts import SharedParts
from testing import indexes
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.fakes.openai_server import FakeLLM, Reply
from testing.image_samples import ALTERATIONS, encode, photo, screenshot
from testing.scenarios import POST, TIERS, build_index

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
SHOT_LINES = ["Lemon water cures the flu", "in three days, doctors say"]
REVIEW_URL = "https://www.snopes.com/fact-check/burning-forest-photo/"


def shared_parts_for(
    tmp_path: Path, fake: FakeLLM | None = None, *, local: bool = True
) -> SharedParts:
    cfg = PipelineConfig(
        credibility=CredibilityConfig(overrides=TIERS),
        fetch=FetchConfig(allow_hosts=["127.0.0.1"] if local else []),
        images=ImagesConfig(local_dir=str(tmp_path)),
    )
    if fake is not None:
        cfg.llm = fake.config()
    return indexes.build_parts(cfg, index_path=build_index(tmp_path / "index.sqlite"))


def image_post(
    tmp_path: Path, picture: PILImage.Image, text: str = "", name: str = "a.png"
) -> Post:
    path = tmp_path / name
    path.write_bytes(encode(picture, "PNG"))
    return Post(
        id="img1",
        author="someone_demo",
        text=text,
        created_at=NOW - timedelta(hours=1),
        images=[Image(source=str(path))],
    )


def stop_analysis(fake: FakeLLM) -> None:
    fake.script(
        "analyze",
        Reply.json(
            {"checkable": False, "reason": "stop", "claims": [], "questions": [], "queries": []}
        ),
    )


def test_without_a_vision_model_the_ocr_text_describes_the_image_and_the_decision_says_so(
    tmp_path: Path,
) -> None:
    shared = shared_parts_for(tmp_path)
    post = image_post(tmp_path, screenshot("Health Daily", "@healthdaily", SHOT_LINES))
    decision = Checker(shared).check(post, as_of=NOW)
    shared.close()
    [report] = decision.trace.images
    assert report.described_by is DescriptionSource.OCR
    assert report.format == "PNG" and report.sha256 and report.phash
    texts = [line.text for line in report.ocr]
    assert "Lemon water cures the flu" in texts
    assert all(len(line.box) == 4 and line.score >= 0.8 for line in report.ocr)
    assert report.reverse_search.startswith("skipped: not a public URL")
    # Without an LLM the retrieval still searches what the image says.
    assert decision.status is DecisionStatus.NEEDS_LLM
    assert decision.trace.analysis is not None
    assert "Lemon water cures the flu" in decision.trace.analysis.queries[0]
    assert post.images[0].description is None  # the caller's post is not modified


def test_with_a_vision_model_it_sees_our_small_jpeg_at_low_detail_and_the_text_feeds_analysis(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.script(
        "describe_image",
        Reply.json(
            {
                "text_in_image": "LEMON WATER KILLS FLU",
                "caption": "A screenshot of a wellness post",
                "people": [],
            }
        ),
    )
    stop_analysis(fake_llm)
    big = screenshot("Health Daily", "@healthdaily", SHOT_LINES).resize((2400, 1200))
    post = image_post(tmp_path, big, text=POST.text)
    shared = shared_parts_for(tmp_path, fake_llm)
    decision = Checker(shared).check(post, as_of=NOW)
    shared.close()
    [vision] = fake_llm.requests_for("describe_image")
    part = vision.body["messages"][-1]["content"][1]["image_url"]
    assert part["detail"] == "low"
    assert part["url"].startswith("data:image/jpeg;base64,")
    sent = base64.b64decode(part["url"].split(",", 1)[1])
    with PILImage.open(io.BytesIO(sent)) as seen:
        assert seen.format == "JPEG" and max(seen.size) == 1024
    analysis = fake_llm.requests_for("analyze")[0].body["messages"][-1]["content"]
    assert "LEMON WATER KILLS FLU" in analysis and "A screenshot of a wellness post" in analysis
    assert "exactly 5 queries" in analysis
    [report] = decision.trace.images
    assert report.described_by is DescriptionSource.VISION
    assert report.ocr  # OCR ran as well and is in the trace
    assert decision.verdict is Verdict.NOT_CHECKABLE


def test_a_remote_image_is_fetched_by_us_and_sent_inline(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.script(
        "describe_image", Reply.json({"text_in_image": "", "caption": "A chart", "people": []})
    )
    stop_analysis(fake_llm)
    with LocalHTTPServer() as server:
        server.add(
            "/pic.jpg", Route(body=encode(photo("flower.jpg"), "JPEG"), content_type="image/jpeg")
        )
        post = POST.model_copy(update={"images": [Image(source=server.url("/pic.jpg"))]})
        shared = shared_parts_for(tmp_path, fake_llm)
        decision = Checker(shared).check(post, as_of=NOW)
        shared.close()
        assert server.hits("/pic.jpg") == 1
    # No SerpApi key: the reverse search is skipped, and the report says so.
    assert decision.trace.images[0].reverse_search.startswith("skipped: no key")
    [vision] = fake_llm.requests_for("describe_image")
    url = vision.body["messages"][-1]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")  # the model never gets a stranger's URL


def test_an_unreadable_image_beside_text_is_noted_and_the_check_goes_on(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    stop_analysis(fake_llm)
    post = POST.model_copy(update={"images": [Image(source=str(tmp_path / "missing.png"))]})
    shared = shared_parts_for(tmp_path, fake_llm)
    decision = Checker(shared).check(post, as_of=NOW)
    shared.close()
    assert fake_llm.calls("describe_image") == 0
    assert fake_llm.calls("analyze") == 1
    assert any("image 1 not described" in r and "no such file" in r for r in decision.reasons)


@pytest.mark.parametrize("source", ["blank", "http://10.1.2.3/a.png"])
def test_a_post_whose_only_content_is_an_unreadable_image_abstains_saying_why(
    tmp_path: Path, source: str
) -> None:
    shared = shared_parts_for(tmp_path, local=False)
    if source == "blank":
        post = image_post(tmp_path, PILImage.new("RGB", (400, 300), (240, 240, 240)), "@factnote")
        why = "no text could be read in it"
    else:
        post = POST.model_copy(
            update={"text": "real?? @factnote", "images": [Image(source=source)]}
        )
        why = "refused 10.1.2.3 (private)"
    decision = Checker(shared).check(post, as_of=NOW)
    shared.close()
    assert decision.status is DecisionStatus.ABSTAIN
    assert decision.verdict is Verdict.NOT_CHECKABLE
    assert decision.reasons[0].startswith(
        "not checkable: the post's only content is an image that could not be read"
    )
    assert why in decision.reasons[0]
    assert decision.trace.images[0].described_by is DescriptionSource.NONE


def test_a_repost_of_a_debunked_image_is_a_known_claim(tmp_path: Path) -> None:
    original = photo("china.jpg")
    shared = shared_parts_for(tmp_path)
    shared.images.add(
        SeenImage(
            sha256="0" * 64,
            phash=phash(original),
            source="https://www.snopes.com/uploads/burning-forest.jpg",
            seen_at=NOW - timedelta(days=40),
            fact_check=ClaimRecord(
                claim_text="This photo shows the palace burning down last week.",
                review_url=REVIEW_URL,
                rating=Rating.FALSE,
                rating_text="False",
                publisher_name="Snopes",
                review_date=NOW - timedelta(days=30),
            ).model_dump(mode="json"),
        )
    )
    repost = ALTERATIONS["resize 50% + jpeg q60"](original)
    post = image_post(tmp_path, repost, text="Look what happened yesterday!!")
    decision = Checker(shared).check(post, Platform.X, as_of=NOW)
    shared.close()
    [match] = decision.trace.images[0].matches
    assert match.fact_check_url == REVIEW_URL and match.distance <= 10
    # Without an LLM a strong known claim gets the templated reply citing the fact-check.
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.verdict is Verdict.REFUTED
    assert decision.reply is not None and REVIEW_URL in decision.reply
    assert decision.evidence[0].url == REVIEW_URL


def test_images_seen_in_earlier_posts_are_matched_and_stored_once(tmp_path: Path) -> None:
    shared = shared_parts_for(tmp_path)
    picture = photo("flower.jpg")
    first = image_post(tmp_path, picture, "first", name="one.png")
    again = image_post(tmp_path, picture, "again", name="two.png")
    other = image_post(tmp_path, ALTERATIONS["jpeg q30"](picture), "other", name="three.png")
    checker = Checker(shared)
    assert checker.check(first, as_of=NOW).trace.images[0].matches == []
    [same] = checker.check(again, as_of=NOW).trace.images[0].matches
    assert same.distance == 0 and same.source == first.images[0].source
    matched = checker.check(other, as_of=NOW).trace.images[0].matches
    assert [m.source for m in matched] == [first.images[0].source]  # the same bytes: one row
    shared.close()


def test_reverse_search_finds_where_a_posted_image_appeared_first(tmp_path: Path) -> None:
    lens_answer = (
        Path(__file__).parents[2] / "fixtures" / "images" / "google_lens.json"
    ).read_bytes()
    asked: list[httpx.Request] = []

    def serpapi(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(200, content=lens_answer)

    with LocalHTTPServer() as server:
        server.add(
            "/palace.jpg", Route(body=encode(photo("china.jpg"), "JPEG"), content_type="image/jpeg")
        )
        image_url = server.url("/palace.jpg")
        post = POST.model_copy(update={"images": [Image(source=image_url)]})
        shared = shared_parts_for(tmp_path)
        shared.reverse_images = LensSearch(
            ImagesConfig(serpapi_api_key=SecretStr("k")),
            client=httpx.Client(transport=httpx.MockTransport(serpapi)),
        )
        decision = Checker(shared).check(post, as_of=NOW)
        shared.close()
    assert asked[0].url.params["url"] == image_url
    [report] = decision.trace.images
    assert report.reverse_search.startswith("google_lens: 5 match(es), 1 dated after as-of")
    assert report.reverse_matches[0].url == "https://paper.example/2019/02/lantern-festival"
    assert report.reverse_matches[0].tier == "medium"  # the fixture publishers' tier
    assert any(
        r.startswith("post image 1 appeared on 2019-02-19 on paper.example")
        for r in decision.reasons
    )
