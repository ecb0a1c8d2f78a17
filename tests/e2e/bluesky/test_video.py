"""A video posted on Bluesky's own PDS is read from its blob: the adapter finds the record's
`app.bsky.embed.video` blob, the author's PDS from their DID document in the network's PLC
directory, and gives `com.atproto.sync.getBlob` on it as the video's file; the pipeline's
SSRF-guarded fetcher reads those bytes (the very ones uploaded) and the budgeted decoder
finds keyframes in them. The adapter runs in the test process on an account of its own, so
the bot's shared account and its notifications are left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.base import VideoCaps
from adapters.bluesky.adapter import BlueskyAdapter
from adapters.bluesky.client import BlueskyCredentials
from pipeline.config import FetchConfig, VideoConfig
from pipeline.video.intake import fetch_video, take_in_video
from pipeline.web.fetch import Fetcher
from testing.video_samples import Scene, render
from tests.e2e.bluesky.network import Network, User

pytestmark = [pytest.mark.bluesky_e2e, pytest.mark.timeout(900)]


def test_a_posted_video_is_fetched_from_its_blob_on_the_authors_pds_and_decoded(
    bluesky_net: Network, poster: User, tmp_path: Path
) -> None:
    me = User(bluesky_net, "videobot")
    clip = render(tmp_path / "clip.mp4", [Scene("THE DAM HAS BROKEN", 1.0)]).read_bytes()
    posted = poster.post("is this real?", mention=me, video=clip)
    bluesky_net.process()

    adapter = BlueskyAdapter(
        BlueskyCredentials(handle=me.handle, app_password=me.password, pds=bluesky_net.pds),
        session_path=tmp_path / "session",
        video_caps=VideoCaps(max_bytes=5_000_000, max_seconds=600),
        plc_url=bluesky_net.plc,
    )
    [summons] = [s for s in adapter.fetch_summons(None).summons if s.id == posted.uri]
    assert summons.target is not None
    [video] = summons.target.media
    assert video.kind == "video" and video.note is None, video.note
    assert video.video_url is not None
    assert video.video_url.startswith(f"{bluesky_net.pds}/xrpc/com.atproto.sync.getBlob?did=")

    cfg = VideoConfig(max_bytes=5_000_000)
    # The PDS is on loopback here: the test-only allowance the e2e bot has too.
    with Fetcher(FetchConfig(allow_hosts=["localhost"]), cache_ttl_s=0) as fetcher:
        assert fetch_video(video.video_url, fetcher, cfg) == clip
        decoded = take_in_video(video.video_url, fetcher, cfg)
    assert decoded.keyframes and 0.5 < decoded.duration < 1.5
