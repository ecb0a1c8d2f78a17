"""A post's media file by its source, as images and videos both take it in: an http(s) URL
through the SSRF-guarded fetcher, or a file under the inbox folder (`capped_read`), each at
most the kind's byte cap. Any other scheme (`file://`, `data:`) is refused."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from pipeline.capped_read import read_in_folder
from pipeline.web.fetch import Fetcher, FetchFailure


class MediaUnreadable(ValueError):
    """Why a media source could not be read, in one line naming the source."""


@dataclass(frozen=True)
class MediaLimits:
    kind: str  # "images" or "videos", for the refusal of a local file
    folder_setting: str  # the setting that names the local folder, for the same refusal
    local_dir: str | None  # None: local files are not read
    max_bytes: int
    accept: str  # the Accept header sent with a URL
    media_types: Collection[str]  # the Content-Types a URL may answer with


def fetch_media(url: str, fetcher: Fetcher, limits: MediaLimits) -> bytes:
    """The bytes at `url`, through the SSRF-guarded fetcher with the kind's byte cap."""
    try:
        page = fetcher.fetch_raw(
            url, accept=limits.accept, media_types=limits.media_types, max_bytes=limits.max_bytes
        )
    except FetchFailure as exc:
        raise MediaUnreadable(f"{url}: {exc.error}") from exc
    return page.data


def media_bytes(source: str, fetcher: Fetcher, limits: MediaLimits) -> bytes:
    """The bytes of one media source: a URL, or a file under `limits.local_dir`. A relative
    name is inside that folder (an inbox entry names its media beside it), whatever the working
    directory."""
    if source.lower().startswith(("https://", "http://")):
        return fetch_media(source, fetcher, limits)
    if "://" in source or source.lower().startswith("data:"):
        raise MediaUnreadable(f"{source[:80]}: only http(s) URLs and inbox files are read")
    if limits.local_dir is None:
        raise MediaUnreadable(
            f"{source}: local {limits.kind} are not read (no {limits.folder_setting})"
        )
    try:
        return read_in_folder(source, limits.local_dir, limits.max_bytes)
    except ValueError as exc:
        raise MediaUnreadable(str(exc)) from exc
