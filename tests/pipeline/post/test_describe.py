"""What a check reads of a post: `cap_post` cuts it to the prompt limits and says what it cut."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.config import LLMConfig
from pipeline.llm.prompts import CUT_MARK
from pipeline.post.describe import MAX_IMAGES, MAX_LINKS, cap_post, post_block
from pipeline.records import Image, Post

WHEN = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)


def post(text: str, **fields: object) -> Post:
    return Post.model_validate(
        {"id": "p", "author": "someone", "text": text, "created_at": WHEN, **fields}
    )


def test_a_post_within_the_limits_is_unchanged_and_nothing_is_noted() -> None:
    original = post("A short claim.", links=["https://a.example/"], images=[{"source": "x.png"}])
    capped, notes = cap_post(original, LLMConfig())
    assert capped == original and notes == []


def test_post_and_quoted_and_parent_text_are_cut_to_the_configured_limit() -> None:
    original = post(
        "p" * 5000,
        quoted=post("q" * 300),
        parent=post("r" * 200, quoted=post("deeper" * 10_000)),
    )
    capped, notes = cap_post(original, LLMConfig(max_post_chars=250))
    assert capped.text == "p" * 250 + CUT_MARK
    assert capped.quoted is not None and capped.quoted.text == "q" * 250 + CUT_MARK
    assert capped.parent is not None and capped.parent.text == "r" * 200
    # A post nested deeper is never shown to the model, so it is not carried either.
    assert capped.parent.quoted is None
    assert notes == [
        "post text cut to 250 of 5,000 characters for the LLM prompts",
        "quoted post text cut to 250 of 300 characters for the LLM prompts",
    ]
    assert original.text == "p" * 5000  # the caller's post is not touched
    block = post_block(capped)
    assert len(block) < 1000


def test_image_texts_links_and_authors_are_capped_too() -> None:
    images = [{"source": f"{n}.png", "alt_text": "a" * 1500} for n in range(MAX_IMAGES + 2)]
    links = [f"https://l{n}.example/" for n in range(MAX_LINKS + 1)]
    original = post(
        "claim", author="n" * 2000, images=images, links=["https://x.example/" + "z" * 2000, *links]
    )
    capped, notes = cap_post(original, LLMConfig(max_item_chars=1000))
    assert capped.author == "n" * 1000 + CUT_MARK
    assert len(capped.images) == MAX_IMAGES
    assert all(i.alt_text == "a" * 1000 + CUT_MARK for i in capped.images)
    assert capped.links == links[:MAX_LINKS]
    assert "post author cut to 1,000 of 2,000 characters for the LLM prompts" in notes
    assert "post image 1 alt text cut to 1,000 of 1,500 characters for the LLM prompts" in notes
    assert "post: 2 image(s) past the first 4 left out of the LLM prompts" in notes
    assert "post: 2 link(s) left out of the LLM prompts" in notes


def test_descriptions_filled_into_the_capped_post_leave_the_callers_post_alone() -> None:
    original = post("claim", images=[Image(source="x.png")])
    capped, _ = cap_post(original, LLMConfig())
    capped.images[0].description = "a chart"
    assert original.images[0].description is None


def test_the_post_time_is_given_to_the_minute_in_utc_whatever_its_offset() -> None:
    from datetime import timedelta, timezone

    from pipeline.post.describe import prompt_time

    assert prompt_time(WHEN) == "2026-11-29 08:00 UTC"
    berlin = datetime(2026, 11, 29, 9, 0, 59, tzinfo=timezone(timedelta(hours=1)))
    assert prompt_time(berlin) == "2026-11-29 08:00 UTC"
    assert prompt_time(datetime(2026, 11, 29, 8, 0)) == "2026-11-29 08:00 UTC"  # naive: UTC
    assert "time: 2026-11-29 08:00 UTC" in post_block(post("A claim."))
