"""Post views (what the AppView returns) as `SocialPost` records.

Embeds are read by type: images become photos, an external embed a link, a video
(`app.bsky.embed.video#view`) a `MediaRef(kind="video")` with its thumbnail as `url` and, when
a `VideoFile` locator is given, the record's video blob on the author's PDS as `video_url`
(adapters.bluesky.video; without one, or when it cannot be had, the note says why and the video
is recorded, not analysed), and an embed this SDK or this code does not know an `unsupported`
attachment with a note. A quoted post is read from the view's `app.bsky.embed.record#view`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atproto import models
from atproto_client.models.dot_dict import DotDict

from adapters.base import MediaRef, PlatformError, SocialPost, readable_text, storable
from adapters.bluesky.records import facet_links, post_record, quoted_ref
from adapters.bluesky.times import parse_time_or
from adapters.bluesky.video import blob_cid

BOT_LABEL = "bot"
# (author DID, the record's video blob) -> (the blob's URL, or None and why not).
VideoFile = Callable[[str, Any], tuple[str | None, str | None]]


def is_bot(author: Any, known_bots: frozenset[str]) -> bool:
    """An author with the `bot` self-label, or one of the configured `known_bots`."""
    for label in getattr(author, "labels", None) or []:
        if label.val == BOT_LABEL and not label.neg:
            return True
    names = {str(author.did).lower(), str(getattr(author, "handle", "")).lower()}
    return bool(names & known_bots)


def uri_authority(uri: str) -> str:
    return uri.removeprefix("at://").split("/", 1)[0]


def permalink(handle: str | None, did: str, uri: str) -> str:
    actor = handle if handle and handle != "handle.invalid" else did
    return f"https://bsky.app/profile/{actor}/post/{uri.rsplit('/', 1)[-1]}"


def post_from_view(
    view: Any, is_bot: Callable[[Any], bool], videos: VideoFile | None = None
) -> SocialPost:
    record, notes = post_record(view.record, view.indexed_at)
    if record is None:
        raise PlatformError(f"{view.uri}: {'; '.join(notes)}", retryable=False)
    embeds = [view.embed] if view.embed is not None else []
    quoted_view = quoted_ref(view.embed, view=True)
    quoted = (
        post_from_record_view(quoted_view, is_bot, videos)
        if isinstance(quoted_view, models.AppBskyEmbedRecord.ViewRecord)
        else None
    )
    return _social_post(view, record, embeds, is_bot, quoted, notes, videos)


def post_from_record_view(
    view: Any, is_bot: Callable[[Any], bool], videos: VideoFile | None = None
) -> SocialPost | None:
    if not models.is_record_type(view.value, models.AppBskyFeedPost):
        return None  # a quoted feed generator, list or starter pack: not a post
    record, notes = post_record(view.value, view.indexed_at)
    if record is None:
        return None
    return _social_post(view, record, list(view.embeds or []), is_bot, None, notes, videos)


def _social_post(
    view: Any,
    record: Any,
    embeds: list[Any],
    is_bot: Callable[[Any], bool],
    quoted: SocialPost | None,
    notes: list[str],
    videos: VideoFile | None,
) -> SocialPost:
    blob = _video_blob(record)
    did = str(view.author.did)

    def video_file(view_cid: str) -> tuple[str | None, str | None]:
        if videos is None:
            return None, None
        if blob is None or blob_cid(blob) != view_cid:
            return None, f"video {storable(view_cid)[:80]}: no matching blob in the record"
        return videos(did, blob)

    media, links = _embedded(embeds, video_file)
    return SocialPost(
        id=view.uri,
        author=view.author.handle,
        author_id=view.author.did,
        text=readable_text(record.text, notes),
        created_at=parse_time_or(record.created_at, view.indexed_at),
        url=permalink(view.author.handle, view.author.did, view.uri),
        lang=record.langs[0] if record.langs else None,
        links=list(dict.fromkeys([*facet_links(record.facets), *links])),
        media=media,
        quoted=quoted,
        author_is_bot=is_bot(view.author),
        notes=notes,
    )


def _video_blob(record: Any) -> Any | None:
    """The record's `app.bsky.embed.video` `video` blob, alone or beside a quoted record."""
    embed = getattr(record, "embed", None)
    if isinstance(embed, models.AppBskyEmbedRecordWithMedia.Main):
        embed = embed.media
    return embed.video if isinstance(embed, models.AppBskyEmbedVideo.Main) else None


def _embedded(
    embeds: list[Any], video_file: Callable[[str], tuple[str | None, str | None]]
) -> tuple[list[MediaRef], list[str]]:
    """The media and external links of a post view's embeds."""
    media: list[MediaRef] = []
    links: list[str] = []
    for embed in embeds:
        for part in _media_parts(embed):
            if isinstance(part, models.AppBskyEmbedImages.View):
                media.extend(
                    MediaRef(url=img.fullsize, alt_text=img.alt or None, kind="photo")
                    for img in part.images
                )
            elif isinstance(part, models.AppBskyEmbedExternal.View):
                links.append(part.external.uri)
            elif isinstance(part, models.AppBskyEmbedVideo.View):
                # Without its file, recorded, not analysed: "video not analysed".
                video_url, note = video_file(part.cid)
                media.append(
                    MediaRef(
                        url=part.thumbnail or part.playlist,
                        alt_text=part.alt or None,
                        kind="video",
                        video_url=video_url,
                        note=note,
                    )
                )
            elif not isinstance(part, models.AppBskyEmbedRecord.View):
                # An embed type this SDK does not know (a DotDict) or this code does not read.
                kind = _embed_type(part)
                media.append(MediaRef(url="", kind="unsupported", note=f"embed {kind} not read"))
    return media, links


def _media_parts(embed: Any) -> list[Any]:
    if isinstance(embed, models.AppBskyEmbedRecordWithMedia.View):
        return [embed.media]
    return [embed]


def _embed_type(embed: Any) -> str:
    """The `$type` of an embed view, whatever the SDK made of it."""
    if isinstance(embed, DotDict):
        kind = embed.to_dict().get("$type")
        return storable(kind)[:100] if isinstance(kind, str) else "without a $type"
    return str(getattr(embed, "py_type", None) or type(embed).__name__)
