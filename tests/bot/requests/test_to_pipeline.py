"""Reading a summons' command word as the person typed it to be read, and its media as the
pipeline may read them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters.base import MediaRef, SocialPost
from bot.requests.to_pipeline import command_word, to_post
from pipeline.post.describe import post_block


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("@factnote stop", "stop"),
        ("@factnote STOP!", "stop"),
        ("＠factnote ＳＴＯＰ", "stop"),  # full-width, mention included
        ("@factnote st\u200bop", "stop"),  # zero-width space inside the word
        ("@factnote sto\u00adp", "stop"),  # soft hyphen
        ("@factnote opt   out", "opt out"),
        ("@factnote opt\u00a0out", "opt out"),  # no-break space
        ("@factnote Start.", "start"),
        ("@factnote is this true?", "is this true"),
    ],
)
def test_command_word_reads_what_the_user_sees(text: str, word: str) -> None:
    assert command_word(text) == word


def test_a_video_is_described_as_not_analysed_and_never_fetched() -> None:
    # The media an adapter records: X's video / animated_gif with a preview image (X API v2
    # Media object), an embed Bluesky's SDK does not know, and a photo.
    social = SocialPost(
        id="1897000000000000060",
        author="frank",
        text="Footage of the flood in the capital today",
        created_at=datetime(2026, 3, 2, 9, tzinfo=UTC),
        media=[
            MediaRef(
                url="https://pbs.twimg.com/ext_tw_video_thumb/61/pu/img/flood.jpg",
                alt_text="A flooded street",
                kind="video",
            ),
            MediaRef(url="https://pbs.twimg.com/tweet_video_thumb/flood.jpg", kind="animated_gif"),
            MediaRef(url="", kind="unsupported", note="embed app.bsky.embed.poll#view not read"),
            MediaRef(url="https://pbs.twimg.com/media/flood.jpg", alt_text="A map"),
        ],
    )

    post = to_post(social, "x")

    video, gif, unknown, photo = post.images
    assert video.description == "video not analysed. Alt text: A flooded street"
    assert gif.description == "video not analysed"
    assert unknown.description == (
        "attachment not analysed (embed app.bsky.embed.poll#view not read)"
    )
    assert photo.description is None  # left for the describer to look at
    block = post_block(post)
    assert "image 1: video not analysed. Alt text: A flooded street" in block
    assert "image 2: video not analysed" in block
    assert "image 4: A map" in block


def test_a_video_whose_own_file_is_given_is_left_for_the_video_reader() -> None:
    # The local inbox's "videos" (adapters.local): the file itself, not a preview.
    social = SocialPost(
        id="v1",
        author="frank",
        text="",
        created_at=datetime(2026, 3, 2, 9, tzinfo=UTC),
        media=[
            MediaRef(url="examples/inbox/clip.mp4", kind="video", video_url="inbox/clip.mp4"),
            MediaRef(url="https://pbs.twimg.com/ext_tw_video_thumb/61/pu/img/a.jpg", kind="video"),
        ],
    )
    post = to_post(social, "local")
    [video] = post.videos
    assert video.source == "inbox/clip.mp4" and video.description is None
    [preview] = post.images  # a video known only by its preview stays "not analysed"
    assert preview.description == "video not analysed"
