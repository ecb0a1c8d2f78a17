"""A video named by URL (what the X and Bluesky adapters give as `MediaRef.video_url`: an MP4
variant on X's CDN, `com.atproto.sync.getBlob` on the author's PDS) is read only through the
SSRF-guarded fetcher, with `VideoConfig.max_bytes` checked against the declared length and
while streaming. The far side is a real HTTP server on loopback (testing/fakes/http_server.py),
answering as a PDS's getBlob does: the blob's bytes with its `video/mp4` type
(lexicons/com/atproto/sync/getBlob.json, output `*/*`, "the full blob as originally
uploaded")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.config import FetchConfig, VideoConfig
from pipeline.video.intake import VideoUnreadable, fetch_video, take_in_video
from pipeline.web.fetch import Fetcher
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.video_samples import Scene, render

BLOB = "/xrpc/com.atproto.sync.getBlob?did=did%3Aplc%3Aquinnv2de3oc4ab5yz6xw7ts&cid=bafkrei"


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return render(tmp_path_factory.mktemp("v") / "clip.mp4", [Scene("A CAPTION", 1.0)]).read_bytes()


@pytest.fixture
def pds(clip: bytes) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as server:
        server.add("/xrpc/com.atproto.sync.getBlob", Route(body=clip, content_type="video/mp4"))
        # A PDS that declares no length and sends more than the cap.
        endless = Route(body=clip, content_type="video/mp4", endless=True, send_length=False)
        server.add("/endless.mp4", endless)
        yield server


def allowed() -> Fetcher:
    # Loopback is refused by the guard; the test server is let through by name, as a test may.
    return Fetcher(FetchConfig(allow_hosts=["127.0.0.1"]), cache_ttl_s=0)


def test_a_video_url_on_a_private_address_is_refused_by_the_ssrf_guard(
    pds: LocalHTTPServer,
) -> None:
    with Fetcher(FetchConfig(), cache_ttl_s=0) as fetcher, pytest.raises(VideoUnreadable) as err:
        fetch_video(pds.url(BLOB), fetcher, VideoConfig())
    assert "loopback" in str(err.value)
    assert pds.hits() == 0


@pytest.mark.process  # the decoding child
def test_a_video_url_within_the_cap_is_read_whole_and_decoded(
    pds: LocalHTTPServer, clip: bytes
) -> None:
    cfg = VideoConfig(max_bytes=len(clip))
    with allowed() as fetcher:
        assert fetch_video(pds.url(BLOB), fetcher, cfg) == clip
        decoded = take_in_video(pds.url(BLOB), fetcher, cfg)
    assert decoded.keyframes and 0.5 < decoded.duration < 1.5


def test_a_video_declared_longer_than_the_byte_cap_is_refused(
    pds: LocalHTTPServer, clip: bytes
) -> None:
    with allowed() as fetcher, pytest.raises(VideoUnreadable) as err:
        fetch_video(pds.url(BLOB), fetcher, VideoConfig(max_bytes=len(clip) - 1))
    assert str(err.value) == f"{pds.url(BLOB)}: too large: over {len(clip) - 1} bytes"


def test_a_video_that_runs_past_the_byte_cap_undeclared_is_stopped_while_streaming(
    pds: LocalHTTPServer, clip: bytes
) -> None:
    cap = 4 * len(clip)
    with allowed() as fetcher, pytest.raises(VideoUnreadable) as err:
        fetch_video(pds.url("/endless.mp4"), fetcher, VideoConfig(max_bytes=cap))
    assert str(err.value) == f"{pds.url('/endless.mp4')}: too large: over {cap} bytes"


def test_other_schemes_are_never_fetched() -> None:
    with allowed() as fetcher, pytest.raises(VideoUnreadable) as err:
        take_in_video("file:///etc/passwd", fetcher, VideoConfig())
    assert "only http(s) URLs and inbox files are read" in str(err.value)
