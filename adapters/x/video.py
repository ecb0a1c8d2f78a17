"""Which file of an X video or GIF the pipeline reads: the smallest MP4 variant within the caps.

X gives a video's (and an animated GIF's) files as the media object's `variants`, each with
`content_type`, `bit_rate` (bits per second) and `url` (spec 2.159 `Video` / `AnimatedGif` /
`Variant`, spec 2.167 `Media.variants` / `MediaVariants`: "Absent for playlist variants"), and its
length as `duration_ms`. The smallest `video/mp4` variant is chosen: the keyframes are scaled
down for OCR anyway (`VideoConfig.frame_side`), and the lowest bit rate is the least to fetch
and to decode. With the byte cap and the duration known, `bit_rate × duration_ms` estimates its
size (the sound track and the container add a little; the fetcher enforces the cap on the bytes
themselves while reading, so the estimate only spares a fetch bound to fail). A video longer
than the seconds cap is not chosen at all: the decoder would refuse it.

The HLS playlist (`application/x-mpegURL`) is never chosen: it names many segment files, each a
fetch of its own, and the intake reads one file through the SSRF-guarded, byte-capped fetcher
and hands FFmpeg (in its budgeted child) a file on disk, never a URL it would fetch itself,
outside the guard.
"""

from __future__ import annotations

from adapters.base import VideoCaps
from adapters.x.api import Media, Variant

MP4 = "video/mp4"


def estimated_bytes(variant: Variant, duration_ms: int | None) -> int | None:
    if variant.bit_rate is None or duration_ms is None:
        return None
    return variant.bit_rate * duration_ms // 8000


def video_file(item: Media, caps: VideoCaps) -> tuple[str | None, str | None]:
    """The URL of the file to read, or None and why not (for the attachment's note)."""
    mp4s = [v for v in item.variants if (v.content_type or "").lower() == MP4 and v.url]
    if not mp4s:
        offered = sorted({v.content_type or "no type" for v in item.variants})
        said = ", ".join(offered) if offered else "no variants in the response"
        return None, f"media {item.media_key}: no MP4 file ({said})"
    long = item.duration_ms
    if caps.max_seconds is not None and long is not None and long > caps.max_seconds * 1000:
        return None, (
            f"media {item.media_key}: {long / 1000:.0f} s long, over the cap "
            f"of {caps.max_seconds:g} s"
        )
    # Lowest bit rate first; an MP4 that gives none comes after those that do.
    mp4s.sort(key=lambda v: (v.bit_rate is None, v.bit_rate or 0))
    smallest = mp4s[0]
    size = estimated_bytes(smallest, item.duration_ms)
    if caps.max_bytes is not None and size is not None and size > caps.max_bytes:
        return None, (
            f"media {item.media_key}: its smallest MP4 is about {size:,} bytes "
            f"({smallest.bit_rate:,} bit/s), over the cap of {caps.max_bytes:,}"
        )
    return smallest.url, None
