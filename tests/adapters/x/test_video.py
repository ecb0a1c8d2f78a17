"""A video's own file: the smallest MP4 variant within the pipeline's caps, never the HLS
playlist (adapters/x/video.py).

The page is tests/fixtures/x/mentions_video.json, shaped after X's OpenAPI specs (spec 2.159
`Video` / `AnimatedGif` with `duration_ms` and `variants`, items `Variant` {bit_rate,
content_type, url}; spec 2.167 `Media.variants` = `MediaVariants`, whose `bit_rate` is "Absent
for playlist variants"), and held to both by the contract check of the `api` fixture.
"""

from __future__ import annotations

import responses

from adapters.base import MediaRef, VideoCaps
from bot.requests.to_pipeline import VIDEO_NOT_ANALYSED, to_post
from tests.adapters.x.helpers import MENTIONS, Sleeps, adapter, fixture, query

DAM, GIF, HLS_ONLY, LONG = (f"189700000000000050{n}" for n in (4, 3, 2, 1))
SMALLEST = "https://video.twimg.com/ext_tw_video/1897000000000000511/pu/vid/480x270/clip.mp4?tag=12"


def media(api: responses.RequestsMock, sleeps: Sleeps, caps: VideoCaps) -> dict[str, MediaRef]:
    api.get(MENTIONS, json=fixture("mentions_video"))
    result = adapter(sleeps, video_caps=caps).fetch_summons("1897000000000000500")
    out = {}
    for summons in result.summons:
        assert summons.target is not None
        [out[summons.id]] = summons.target.media
    return out


def test_a_video_gets_its_lowest_bit_rate_mp4_and_never_the_hls_playlist(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found = media(api, sleeps, VideoCaps())

    dam = found[DAM]
    assert (dam.kind, dam.video_url, dam.note) == ("video", SMALLEST, None)
    # The preview stays what a person is shown.
    assert dam.url.endswith("/ext_tw_video_thumb/1897000000000000511/pu/img/dam.jpg")
    assert found[GIF].video_url == "https://video.twimg.com/tweet_video/Gif512.mp4"
    assert found[HLS_ONLY].video_url is None
    assert found[HLS_ONLY].note == (
        "media 7_1897000000000000513: no MP4 file (application/x-mpegURL)"
    )
    # Without caps, length is no reason to pass a file over.
    assert found[LONG].video_url is not None and found[LONG].video_url.endswith(
        "/480x270/clip.mp4?tag=12"
    )
    assert query(api.calls[0])["media.fields"].split(",")[-2:] == ["duration_ms", "variants"]


def test_a_video_whose_smallest_mp4_is_estimated_over_the_byte_cap_gets_no_file_and_says_why(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    # 256,000 bit/s for 30 s: about 960,000 bytes.
    found = media(api, sleeps, VideoCaps(max_bytes=900_000))

    assert found[DAM].video_url is None
    assert found[DAM].note == (
        "media 7_1897000000000000511: its smallest MP4 is about 960,000 bytes "
        "(256,000 bit/s), over the cap of 900,000"
    )
    # A GIF gives no duration: nothing to estimate by, so its one MP4 is read (the fetcher
    # still stops at the cap).
    assert found[GIF].video_url == "https://video.twimg.com/tweet_video/Gif512.mp4"


def test_a_video_that_fits_the_byte_cap_by_estimate_keeps_its_file(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found = media(api, sleeps, VideoCaps(max_bytes=960_000, max_seconds=600))

    assert found[DAM].video_url == SMALLEST


def test_a_video_longer_than_the_seconds_cap_gets_no_file(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found = media(api, sleeps, VideoCaps(max_seconds=600))

    assert found[LONG].video_url is None
    assert found[LONG].note == "media 7_1897000000000000514: 2700 s long, over the cap of 600 s"
    assert found[DAM].video_url == SMALLEST


def test_a_chosen_file_reaches_the_pipeline_as_a_video_and_one_without_stays_not_analysed(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_video"))
    result = adapter(sleeps).fetch_summons("1897000000000000500")
    by_id = {s.id: s.target for s in result.summons}

    dam = by_id[DAM]
    assert dam is not None
    post = to_post(dam, "x")
    assert [(v.source, v.alt_text) for v in post.videos] == [
        (SMALLEST, "A dam with water pouring over it")
    ]
    assert post.images == []
    hls_only = by_id[HLS_ONLY]
    assert hls_only is not None
    post = to_post(hls_only, "x")
    assert post.videos == []
    assert [i.description for i in post.images] == [
        f"{VIDEO_NOT_ANALYSED} (media 7_1897000000000000513: no MP4 file (application/x-mpegURL))"
    ]
