"""Safe image intake: bytes from a URL (through the SSRF-guarded fetcher) or from the local inbox
folder, decoded by Pillow only as JPEG, PNG, GIF or WebP, into a small, clean RGB copy.

An image is written by a stranger, so every step assumes it is hostile:

* Where: URLs go through `Fetcher.fetch_raw` (the same SSRF refusals, re-checked redirects,
  timeout and a byte cap of their own); local paths only from under `ImagesConfig.local_dir`
  (resolved, so neither `..` nor a symlink leads out of it), and only regular files.
* What: the format is sniffed from the magic bytes and Pillow is told to try that one decoder
  only, so an SVG, an HTML error page or a HEIC never reaches a decoder we did not choose.
* Size: a header claiming more than `max_pixels` pixels is refused before decoding, and
  Pillow's own `DecompressionBombWarning` is an error in this process; a large JPEG is decoded
  at reduced size (`draft`), and the copy is cut to `max_side`.
* Time and memory: the decode runs in a child process with a CPU-time and memory budget
  (`pipeline.images.decode`), and a JPEG of more scans than any encoder writes is refused
  before it (a progressive JPEG repeating one small scan costs a full pass over the image
  per repeat).
* Content: the EXIF orientation is applied, then the metadata is dropped (a fresh image holds
  only pixels); of an animated GIF or WebP only the first frame is read.
"""

from __future__ import annotations

import hashlib
import io
import struct
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps

from pipeline.config import ImagesConfig
from pipeline.images.decode import DecodeRefused, run_bounded
from pipeline.web.fetch import Fetcher
from pipeline.web.media_source import MediaLimits, MediaUnreadable, media_bytes

# Process-wide: any Pillow decode in this process refuses a bomb instead of warning about it,
# and Pillow's own ceiling is lowered to what `ImagesConfig.max_pixels` allows by default.
Image.MAX_IMAGE_PIXELS = 40_000_000
warnings.simplefilter("error", Image.DecompressionBombWarning)

# The formats a post's image may have, by magic bytes; Pillow's decoder names.
DECODERS = ("JPEG", "PNG", "GIF", "WEBP")
# What an image URL's server may declare. A missing or generic type is sniffed like any other.
IMAGE_MEDIA_TYPES = frozenset(
    {
        "image/jpeg",
        "image/pjpeg",
        "image/png",
        "image/gif",
        "image/webp",
        "application/octet-stream",
        "binary/octet-stream",
    }
)
IMAGE_ACCEPT = "image/jpeg,image/png,image/gif,image/webp;q=0.9,*/*;q=0.1"
# The decode child's answer starts with four sizes: as received, and of the clean copy.
_SIZES = struct.Struct(">IIII")
_REFUSED_BRANDS = {b"avif": "AVIF", b"avis": "AVIF", b"heic": "HEIC", b"heix": "HEIC"}


class ImageUnreadable(Exception):
    """The image could not be taken in: refused, undecodable, too large or not found."""


@dataclass(frozen=True)
class IntakeImage:
    source: str
    sha256: str  # of the bytes as received: the image's identity in storage
    format: str  # Pillow's name: JPEG, PNG, GIF or WEBP
    width: int  # as received
    height: int
    image: Image.Image  # RGB, EXIF applied and dropped, longer side <= ImagesConfig.max_side

    def jpeg(self, max_side: int, quality: int = 85) -> bytes:
        """A JPEG copy with the longer side at most `max_side` (what a vision model is sent)."""
        copy = self.image.copy()
        copy.thumbnail((max_side, max_side))
        out = io.BytesIO()
        copy.save(out, format="JPEG", quality=quality)
        return out.getvalue()


def sniff(data: bytes) -> str:
    """Pillow's decoder name for `data`, from its magic bytes; ImageUnreadable otherwise."""
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    if data[4:8] == b"ftyp" and data[8:12] in _REFUSED_BRANDS:
        raise ImageUnreadable(f"{_REFUSED_BRANDS[data[8:12]]} images are not read")
    raise ImageUnreadable("not a PNG, JPEG, GIF or WebP image")


def jpeg_scans(data: bytes) -> int:
    """An upper bound on a JPEG's scans: its SOS markers. Entropy-coded data stuffs every 0xFF
    with a 0x00, so FF DA only starts a scan, or sits in a segment (an EXIF thumbnail's own
    scans), which only makes the count safer."""
    return data.count(b"\xff\xda")


def decode(data: bytes, cfg: ImagesConfig, source: str = "image") -> IntakeImage:
    """The image in `data` as a clean RGB copy; ImageUnreadable saying why it is refused.

    The decode runs in a child process with `cfg.decode_cpu_s` of CPU and
    `cfg.decode_memory_mb` of memory (pipeline.images.decode); a JPEG of more scans than
    `cfg.max_jpeg_scans` is refused before any decoding."""
    fmt = sniff(data)
    if fmt == "JPEG" and (scans := jpeg_scans(data)) > cfg.max_jpeg_scans:
        raise ImageUnreadable(
            f"refused: a JPEG of {scans:,} scans (at most {cfg.max_jpeg_scans} are decoded)"
        )
    try:
        decoded = run_bounded(
            decode_pixels,
            (data, fmt, cfg.max_pixels, cfg.max_side),
            cpu_s=cfg.decode_cpu_s,
            memory_bytes=cfg.decode_memory_mb * 2**20,
        )
    except DecodeRefused as exc:
        raise ImageUnreadable(str(exc)) from exc
    width, height, side_x, side_y = _SIZES.unpack_from(decoded)
    pixels = memoryview(decoded)[_SIZES.size :]
    if not (0 < side_x <= cfg.max_side and 0 < side_y <= cfg.max_side) or (
        len(pixels) != side_x * side_y * 3
    ):
        raise ImageUnreadable("the decoder returned a malformed image")
    return IntakeImage(
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
        format=fmt,
        width=width,
        height=height,
        image=Image.frombytes("RGB", (side_x, side_y), pixels),
    )


def decode_pixels(data: bytes, fmt: str, max_pixels: int, max_side: int) -> bytes:
    """Width and height as received, the clean RGB copy's width and height (`_SIZES`), then
    its pixels. Runs in the decode child (see `decode`); ImageUnreadable saying why the image
    is refused."""
    try:
        with Image.open(io.BytesIO(data), formats=[fmt]) as opened:
            width, height = opened.size
            if width * height > max_pixels:
                raise ImageUnreadable(
                    f"decompression bomb refused: {width}x{height} is over {max_pixels:,} pixels"
                )
            if fmt == "JPEG":
                # Decode at the smallest DCT scale still >= max_side: 8000x6000 in ~40 ms.
                opened.draft("RGB", (max_side, max_side))
            opened.seek(0)  # the first frame of an animation only
            opened.load()
            clean = _clean_rgb(opened)
    except ImageUnreadable:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageUnreadable(f"decompression bomb refused: {exc}") from exc
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        # UnidentifiedImageError and truncated data are OSErrors; SyntaxError is what some
        # Pillow plugins raise on a malformed header.
        raise ImageUnreadable(f"cannot decode as {fmt}: {exc}") from exc
    except MemoryError:
        raise
    except Exception as exc:
        # Any other decoder or EXIF crash on a hostile file is this image's problem only.
        raise ImageUnreadable(f"cannot decode as {fmt}: {type(exc).__name__}: {exc}") from exc
    clean.thumbnail((max_side, max_side))
    return _SIZES.pack(width, height, *clean.size) + clean.tobytes()


def _clean_rgb(opened: Image.Image) -> Image.Image:
    oriented = ImageOps.exif_transpose(opened)
    if oriented.mode in ("RGBA", "LA", "PA") or (
        oriented.mode == "P" and "transparency" in oriented.info
    ):
        # Transparent parts become white, as a screenshot on a light page shows them.
        rgba = oriented.convert("RGBA")
        rgb = Image.new("RGB", rgba.size, "white")
        rgb.paste(rgba, mask=rgba.getchannel("A"))
    else:
        rgb = oriented.convert("RGB")
    # A fresh image carries pixels only: no EXIF (GPS, camera serial), ICC or comments.
    fresh = Image.new("RGB", rgb.size)
    fresh.paste(rgb)
    return fresh


def _limits(cfg: ImagesConfig) -> MediaLimits:
    return MediaLimits(
        "images", "images.local_dir", cfg.local_dir, cfg.max_bytes, IMAGE_ACCEPT, IMAGE_MEDIA_TYPES
    )


def take_in(source: str, fetcher: Fetcher, cfg: ImagesConfig) -> IntakeImage:
    """Read and decode one image of a post, by URL or by local path."""
    try:
        data = media_bytes(source, fetcher, _limits(cfg))
    except MediaUnreadable as exc:
        raise ImageUnreadable(str(exc)) from exc
    try:
        return decode(data, cfg, source)
    except ImageUnreadable as exc:
        raise ImageUnreadable(f"{source[:200]}: {exc}") from exc
