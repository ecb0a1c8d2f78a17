"""Video intake and decoding in a budgeted child process: keyframes by scene change from videos
rendered here with PyAV, and every cap and every broken or hostile file ending as an unreadable
video with its reason, never a stalled or crashed worker."""

from __future__ import annotations

import io
import time
from pathlib import Path

import av
import pytest
from PIL import Image

from pipeline.config import FetchConfig, VideoConfig
from pipeline.video.intake import VideoUnreadable, decode_video, take_in_video
from pipeline.web.fetch import Fetcher
from testing.video_samples import THREE_SCENES, Scene, render, strobe

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return render(tmp_path_factory.mktemp("video") / "three.mp4", THREE_SCENES).read_bytes()


@pytest.mark.parametrize("codec", ["mpeg4", "libx264"])
def test_one_keyframe_per_scene_with_its_time_first_frame_included(
    tmp_path: Path, codec: str
) -> None:
    data = render(tmp_path / "v.mp4", THREE_SCENES, codec=codec).read_bytes()
    video = decode_video(data, VideoConfig())
    assert [k.t for k in video.keyframes] == [0.0, 1.0, 3.0]
    assert (video.width, video.height) == (640, 360)
    assert video.duration == pytest.approx(5.0, abs=0.2)
    assert video.decoded == 50
    first = Image.open(io.BytesIO(video.keyframes[0].png))
    assert first.format == "PNG" and first.size == (640, 360)
    assert first.getpixel((10, 10)) == pytest.approx((20, 90, 40), abs=8)


def test_keyframes_are_capped_and_spread_over_the_length(tmp_path: Path) -> None:
    scenes = [Scene("", 0.5, background=(i * 20, 255 - i * 20, (i * 70) % 256)) for i in range(12)]
    data = render(tmp_path / "many.mp4", scenes).read_bytes()
    video = decode_video(data, VideoConfig(max_keyframes=4))
    times = [k.t for k in video.keyframes]
    assert len(times) == 4 and times[0] == 0.0
    assert times[-1] >= 3.0  # the last kept scene is in the second half of the 6 s video


@pytest.mark.parametrize(
    ("cfg", "reason"),
    [
        (VideoConfig(max_seconds=2.0), "over the cap of 2.0 s"),
        (VideoConfig(max_pixels=10_000), "640x360 is over 10,000 pixels"),
    ],
)
def test_a_video_over_a_cap_is_refused_with_the_cap(
    three: bytes, cfg: VideoConfig, reason: str
) -> None:
    with pytest.raises(VideoUnreadable, match=reason):
        decode_video(three, cfg)


def test_garbage_and_truncated_files_are_unreadable_with_ffmpegs_reason(three: bytes) -> None:
    with pytest.raises(VideoUnreadable, match="cannot decode"):
        decode_video(b"<html>not a video</html>" * 100, VideoConfig())
    with pytest.raises(VideoUnreadable):
        decode_video(three[: len(three) // 3], VideoConfig())


def test_a_raw_stream_with_no_duration_is_stopped_at_the_seconds_cap(tmp_path: Path) -> None:
    # A raw MPEG-4 elementary stream declares no duration: the cap applies while decoding.
    path = tmp_path / "raw.m4v"
    with av.open(str(path), mode="w", format="m4v") as out:
        stream = out.add_stream("mpeg4", rate=10)
        assert isinstance(stream, av.VideoStream)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        for i in range(40):
            frame = av.VideoFrame.from_image(Image.new("RGB", (64, 64), (i * 6, 0, 0)))
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    with pytest.raises(VideoUnreadable, match=r"runs past the cap of 2\.0 s"):
        decode_video(path.read_bytes(), VideoConfig(max_seconds=2.0))


def test_the_wall_deadline_kills_a_decoder_that_takes_too_long(three: bytes) -> None:
    start = time.monotonic()
    with pytest.raises(VideoUnreadable, match=r"wall deadline of 0\.05 s"):
        decode_video(three, VideoConfig(decode_timeout_s=0.05))
    assert time.monotonic() - start < 5


def test_the_cpu_budget_kills_a_strobe_the_same_budget_reads_a_normal_video_in(
    tmp_path: Path, three: bytes
) -> None:
    # Every frame sampled, each a full-size noise PNG: several CPU seconds against a budget of
    # one (RLIMIT_CPU's smallest); the wall deadline is far, so it is the rlimit that acts.
    cfg = VideoConfig(cpu_seconds=1, sample_fps=30, decode_timeout_s=120)
    assert decode_video(three, cfg).keyframes
    hostile = strobe(tmp_path / "strobe.mp4").read_bytes()
    with pytest.raises(VideoUnreadable, match="decoder killed: over its budget of 1 CPU seconds"):
        decode_video(hostile, cfg)


def test_the_memory_budget_ends_the_child_not_the_worker(tmp_path: Path, three: bytes) -> None:
    # 300 MB of address space: a 640x360 video decodes in it, 3840x2160 frames do not.
    cfg = VideoConfig(memory_mb=300)
    assert decode_video(three, cfg).keyframes
    scenes = [Scene("", 0.5), Scene("BIG", 0.5, background=(200, 10, 10), size=200)]
    big = render(tmp_path / "4k.mp4", scenes, width=3840, height=2160, fps=2).read_bytes()
    with pytest.raises(VideoUnreadable, match="over the memory budget of 300 MB"):
        decode_video(big, cfg)


def test_local_paths_are_confined_to_the_inbox_folder(tmp_path: Path, three: bytes) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "clip.mp4").write_bytes(three)
    (tmp_path / "secret.mp4").write_bytes(three)
    cfg = VideoConfig(local_dir=str(inbox))
    fetcher = Fetcher(FetchConfig())
    assert take_in_video(str(inbox / "clip.mp4"), fetcher, cfg).keyframes
    with pytest.raises(VideoUnreadable, match="outside the inbox folder"):
        take_in_video(str(inbox / ".." / "secret.mp4"), fetcher, cfg)
    with pytest.raises(VideoUnreadable, match="over 1024 bytes"):
        take_in_video(str(inbox / "clip.mp4"), fetcher, cfg.model_copy(update={"max_bytes": 1024}))
    with pytest.raises(VideoUnreadable, match="only http"):
        take_in_video("file:///etc/passwd", fetcher, cfg)
