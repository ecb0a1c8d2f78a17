"""Safe image intake: only JPEG/PNG/GIF/WebP by magic bytes, bombs refused, EXIF applied and
dropped, first frames only, local files only from the inbox folder, URLs only through the
SSRF-guarded fetcher (tested against a real local HTTP server)."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from pipeline.config import FetchConfig, ImagesConfig
from pipeline.images.decode import WALL_ALLOWANCE_S
from pipeline.images.intake import ImageUnreadable, decode, jpeg_scans, sniff, take_in
from pipeline.web.fetch import Fetcher
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.image_samples import encode, photo, repeated_scan_jpeg, sentence

LOCAL = ["127.0.0.1"]
ROOT = Path(__file__).resolve().parents[3]


def png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header claims `width`x`height` (a decompression bomb's header): one
    compressed row of zeros, enough for Pillow to read the header and start decoding."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    rows = zlib.compress(b"\x00" * (width + 1) * 4)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )


def rgb(image: Image.Image, xy: tuple[int, int]) -> tuple[int, ...]:
    pixel = image.getpixel(xy)
    assert isinstance(pixel, tuple)
    return pixel


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        yield srv


def fetcher(allow_hosts: list[str] | None = None) -> Fetcher:
    return Fetcher(FetchConfig(allow_hosts=LOCAL if allow_hosts is None else allow_hosts))


# --- formats ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "GIF", "WEBP"])
def test_the_four_formats_are_sniffed_and_decoded(fmt: str) -> None:
    data = encode(sentence("format check"), fmt)
    assert sniff(data) == fmt
    taken = decode(data, ImagesConfig())
    assert taken.format == fmt and taken.image.mode == "RGB"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<!doctype html><html><body>404</body></html>", "not a PNG, JPEG, GIF or WebP"),
        (b'<svg xmlns="http://www.w3.org/2000/svg"><script>x()</script></svg>', "not a PNG"),
        (b"\x00\x00\x00\x1cftypheic\x00\x00\x00\x00mif1heic", "HEIC images are not read"),
        (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00mif1avif", "AVIF images are not read"),
        (b"BM" + b"\x00" * 60, "not a PNG"),  # BMP: Pillow could, we do not
    ],
)
def test_other_formats_are_refused_by_their_magic_bytes(data: bytes, message: str) -> None:
    with pytest.raises(ImageUnreadable, match=message):
        decode(data, ImagesConfig())


def test_a_file_named_like_an_image_with_other_bytes_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secrets.png"
    path.write_text("API_KEY=abc", encoding="utf-8")
    with pytest.raises(ImageUnreadable, match="not a PNG"):
        take_in(str(path), fetcher(), ImagesConfig(local_dir=str(tmp_path)))


def test_a_truncated_image_is_refused_not_half_read() -> None:
    data = encode(photo("china.jpg"), "JPEG")
    with pytest.raises(ImageUnreadable, match="cannot decode as JPEG"):
        decode(data[: len(data) // 3], ImagesConfig())


# --- bombs and size -----------------------------------------------------------------------------


def test_a_header_claiming_too_many_pixels_is_refused_before_decoding() -> None:
    data = png_claiming(10_000, 10_000)  # 100 Mpx in a few hundred bytes
    assert len(data) < 1000
    with pytest.raises(ImageUnreadable, match="decompression bomb refused"):
        decode(data, ImagesConfig())
    with pytest.raises(ImageUnreadable, match="decompression bomb refused: 3000x3000"):
        decode(png_claiming(3000, 3000), ImagesConfig(max_pixels=1_000_000))


@pytest.mark.process  # a child interpreter: left out of `make test-fast`
def test_pillows_bomb_warning_is_an_error_in_any_process_that_takes_images_in() -> None:
    # Outside pytest's own warning filters: a plain Image.open of a 50 Mpx header (Pillow
    # only warns between MAX_IMAGE_PIXELS and twice that) must raise once intake is imported.
    script = (
        "import io, sys; sys.path.insert(0, '.');"
        "import pipeline.images.intake;"
        "from PIL import Image;"
        "from tests.pipeline.images.test_intake import png_claiming;"
        "Image.open(io.BytesIO(png_claiming(7500, 7000)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert "DecompressionBombWarning" in done.stderr


def test_a_large_jpeg_is_decoded_at_reduced_size() -> None:
    big = photo("china.jpg").resize((6400, 4270))
    data = encode(big, "JPEG", quality=80)
    start = time.perf_counter()
    taken = decode(data, ImagesConfig(max_side=1024))
    seconds = time.perf_counter() - start
    assert (taken.width, taken.height) == (6400, 4270)
    assert max(taken.image.size) == 1024
    with Image.open(io.BytesIO(data)) as opened:
        opened.draft("RGB", (1024, 1024))
        assert opened.size[0] < 6400  # draft did pick a reduced DCT scale
    assert seconds < 5.0


# --- content ------------------------------------------------------------------------------------


def test_exif_orientation_is_applied_and_exif_is_dropped() -> None:
    image = Image.new("RGB", (200, 100), "white")
    image.paste((255, 0, 0), (0, 0, 100, 100))  # left half red
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to display
    exif[0x8825] = {2: (51.0, 30.0, 0.0)}  # a GPS latitude, which must not survive
    exif[0x010F] = "CameraMaker"
    data = encode(image, "JPEG", exif=exif.tobytes())
    taken = decode(data, ImagesConfig())
    assert taken.image.size == (100, 200)  # turned upright
    assert rgb(taken.image, (50, 20))[0] > 200  # the red half is now on top
    assert not taken.image.getexif()
    assert "exif" not in taken.image.info
    with Image.open(io.BytesIO(taken.jpeg(1024))) as sent:
        assert not sent.getexif() and "exif" not in sent.info


def test_only_the_first_frame_of_an_animated_gif_is_read() -> None:
    frames = [Image.new("RGB", (64, 64), colour) for colour in ("red", "green", "blue")]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=50)
    taken = decode(out.getvalue(), ImagesConfig())
    red, green, blue = rgb(taken.image, (10, 10))
    assert red > 200 and green < 50 and blue < 50


def test_a_transparent_png_is_composited_on_white() -> None:
    image = Image.new("RGBA", (40, 40), (0, 0, 0, 0))
    taken = decode(encode(image, "PNG"), ImagesConfig())
    assert taken.image.getpixel((5, 5)) == (255, 255, 255)


def test_the_same_bytes_have_the_same_identity() -> None:
    data = encode(sentence("same"), "PNG")
    assert decode(data, ImagesConfig()).sha256 == decode(data, ImagesConfig()).sha256


# --- local files --------------------------------------------------------------------------------


def test_local_images_are_read_only_from_the_inbox_folder(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "shot.png").write_bytes(encode(sentence("inside"), "PNG"))
    outside = tmp_path / "outside.png"
    outside.write_bytes(encode(sentence("outside"), "PNG"))
    (inbox / "link.png").symlink_to(outside)
    cfg = ImagesConfig(local_dir=str(inbox))
    assert take_in(str(inbox / "shot.png"), fetcher(), cfg).format == "PNG"
    for sneaky in (str(outside), str(inbox / ".." / "outside.png"), str(inbox / "link.png")):
        with pytest.raises(ImageUnreadable, match="outside the inbox folder"):
            take_in(sneaky, fetcher(), cfg)
    with pytest.raises(ImageUnreadable, match="local images are not read"):
        take_in(str(inbox / "shot.png"), fetcher(), ImagesConfig(local_dir=None))


def test_a_relative_image_name_is_read_from_the_inbox_folder_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = tmp_path / "moved" / "inbox"
    (inbox / "shots").mkdir(parents=True)
    (inbox / "shots" / "shot.png").write_bytes(encode(sentence("inside"), "PNG"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "shots").mkdir()
    (elsewhere / "shots" / "shot.png").write_bytes(encode(sentence("cwd"), "JPEG"))
    monkeypatch.chdir(elsewhere)  # a same-named file here must not be the one read
    cfg = ImagesConfig(local_dir=str(inbox))
    assert take_in("shots/shot.png", fetcher(), cfg).format == "PNG"
    with pytest.raises(ImageUnreadable, match="outside the inbox folder"):
        take_in("../../elsewhere/shots/shot.png", fetcher(), cfg)
    with pytest.raises(
        ImageUnreadable, match=f"^nope.png: no such file in the inbox folder {inbox}$"
    ):
        take_in("nope.png", fetcher(), cfg)


def test_local_files_are_read_up_to_the_cap_and_directories_not_at_all(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(encode(sentence("big"), "PNG") + b"\x00" * 2000)
    cfg = ImagesConfig(local_dir=str(tmp_path), max_bytes=1024)
    with pytest.raises(ImageUnreadable, match="over 1024 bytes"):
        take_in(str(tmp_path / "big.png"), fetcher(), cfg)
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(ImageUnreadable, match="not a file"):
        take_in(str(tmp_path / "dir.png"), fetcher(), cfg)
    with pytest.raises(ImageUnreadable, match="no such file"):
        take_in(str(tmp_path / "missing.png"), fetcher(), cfg)


def test_a_device_is_never_read(tmp_path: Path) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    cfg = ImagesConfig(local_dir="/dev")
    with pytest.raises(ImageUnreadable, match="not a file"):
        take_in("/dev/zero", fetcher(), cfg)


@pytest.mark.parametrize("source", ["file:///etc/passwd", "ftp://x.example/a.png", "data:,x"])
def test_other_schemes_are_refused(source: str) -> None:
    with pytest.raises(ImageUnreadable, match=r"only http\(s\) URLs and inbox files"):
        take_in(source, fetcher(), ImagesConfig())


# --- URLs ---------------------------------------------------------------------------------------


def test_an_image_url_is_fetched_through_the_fetcher(server: LocalHTTPServer) -> None:
    data = encode(sentence("served"), "PNG")
    server.add("/a.png", Route(body=data, content_type="image/png"))
    server.add("/untyped", Route(body=data, content_type=None))
    with fetcher() as fetch:
        assert take_in(server.url("/a.png"), fetch, ImagesConfig()).format == "PNG"
        assert take_in(server.url("/untyped"), fetch, ImagesConfig()).format == "PNG"
    [request, _] = server.requests
    assert request.headers.get("Accept", "").startswith("image/")


def test_image_urls_get_the_ssrf_refusals(server: LocalHTTPServer) -> None:
    server.add("/a.png", Route(body=encode(sentence("x"), "PNG"), content_type="image/png"))
    with fetcher(allow_hosts=[]) as fetch:
        for url, reason in (
            (server.url("/a.png"), "ssrf: refused 127.0.0.1 (loopback)"),
            ("http://169.254.169.254/latest/meta-data/x.png", "(metadata)"),
            ("http://10.0.0.7/a.png", "(private)"),
            ("http://2130706433/a.png", "non-canonical IPv4"),
        ):
            with pytest.raises(
                ImageUnreadable, match=reason.replace("(", r"\(").replace(")", r"\)")
            ):
                take_in(url, fetch, ImagesConfig())
    assert server.hits("/a.png") == 0


def test_a_redirect_to_an_internal_address_is_refused(server: LocalHTTPServer) -> None:
    server.add("/go.png", Route.redirect("http://192.168.1.1/router.png"))
    with fetcher() as fetch, pytest.raises(ImageUnreadable, match=r"refused 192.168.1.1"):
        take_in(server.url("/go.png"), fetch, ImagesConfig())


def test_image_urls_get_the_byte_cap_and_the_type_check(server: LocalHTTPServer) -> None:
    server.add("/huge.png", Route(body=b"\x89PNG" + b"\x00" * 5000, content_type="image/png"))
    server.add("/page.png", Route(body="<html>not an image</html>"))
    with fetcher() as fetch:
        with pytest.raises(ImageUnreadable, match="too large: over 2048 bytes"):
            take_in(server.url("/huge.png"), fetch, ImagesConfig(max_bytes=2048))
        with pytest.raises(ImageUnreadable, match="unsupported content type: text/html"):
            take_in(server.url("/page.png"), fetch, ImagesConfig())


def test_the_byte_cap_holds_without_a_content_length(server: LocalHTTPServer) -> None:
    server.add(
        "/endless.png",
        Route(body=b"\x89PNG" + b"\x00" * 4096, content_type="image/png", endless=True),
    )
    with fetcher() as fetch, pytest.raises(ImageUnreadable, match="too large"):
        take_in(server.url("/endless.png"), fetch, ImagesConfig(max_bytes=100_000))


def test_a_dripping_image_url_ends_at_the_fetch_deadline(server: LocalHTTPServer) -> None:
    # One byte every 0.3 s never trips a read timeout; the fetch's 1 s total deadline (the page
    # fetcher's, checked after every chunk) ends it, at most one byte late (issue 33).
    data = encode(sentence("slow"), "PNG")
    server.add(
        "/slow.png", Route(body=data, content_type="image/png", chunk_size=1, chunk_delay_s=0.3)
    )
    t0 = time.monotonic()
    with (
        Fetcher(FetchConfig(allow_hosts=LOCAL, timeout_s=1.0)) as fetch,
        pytest.raises(ImageUnreadable, match=r"timeout after 1\.0s"),
    ):
        take_in(server.url("/slow.png"), fetch, ImagesConfig())
    assert time.monotonic() - t0 < 1.0 + 0.3 + 0.4


# --- decoding cost (issue 33) -------------------------------------------------------------------


def test_a_jpeg_of_more_scans_than_any_encoder_writes_is_refused_unread() -> None:
    data = repeated_scan_jpeg(1000)  # 1,010 scans; Pillow itself wrote 10
    assert jpeg_scans(encode(photo("china.jpg"), "JPEG", progressive=True)) <= 12
    with pytest.raises(ImageUnreadable, match=r"refused: a JPEG of 1,010 scans \(at most 100"):
        decode(data, ImagesConfig())


def test_a_decode_past_its_cpu_budget_is_stopped_and_refused() -> None:
    # Past the scan check (raised for the test), ~4 s of CPU unbounded; the child is ended by
    # the kernel after its 1 s, and the caller never waits past the wall-clock allowance.
    cfg = ImagesConfig(max_jpeg_scans=100_000, decode_cpu_s=1.0)
    t0 = time.monotonic()
    with pytest.raises(ImageUnreadable, match="decoding used over 1 s of CPU"):
        decode(repeated_scan_jpeg(6000), cfg)
    assert time.monotonic() - t0 < 1.0 + WALL_ALLOWANCE_S


def test_a_decode_past_its_memory_budget_is_refused() -> None:
    # 6000x6000 RGB kept at full size (max_side raised) needs 108 MiB per copy, and the clean
    # copy is a second one: over the 128 MiB more the child may map than it had at the fork.
    big = encode(Image.new("RGB", (6000, 6000), (90, 90, 90)), "PNG")
    with pytest.raises(ImageUnreadable, match="decoding needed over 128 MiB"):
        decode(big, ImagesConfig(decode_memory_mb=128, max_side=8192))
