"""From the adapters' records to the pipeline's: the one place the two vocabularies meet."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

from adapters.base import VIDEO_KINDS, MediaRef, SocialPost, Summons, TargetStatus
from bot.platforms import spec_for
from pipeline.records import Image, Platform, Post, Video

_MENTION_RE = re.compile(r"(?<!\w)@[\w.\-]+")
_URL_RE = re.compile(r"https?://\S+")


def reply_platform(adapter_platform: str) -> Platform:
    """Whose counting rules a reply on this adapter follows: its spec's reply format
    (`bot.platforms`); a platform no spec names uses X's, the strictest."""
    spec = spec_for(adapter_platform)
    return spec.reply_format if spec is not None else Platform.X


def to_post(social: SocialPost, platform: str) -> Post:
    return Post(
        id=social.id,
        author=social.author,
        text=social.text,
        created_at=social.created_at,
        platform=platform,
        url=social.url,
        lang=social.lang,
        links=list(social.links),
        images=[_image(m) for m in social.media if not _readable_video(m)],
        videos=[
            Video(source=m.video_url, alt_text=m.alt_text)
            for m in social.media
            if _readable_video(m) and m.video_url
        ],
        quoted=to_post(social.quoted, platform) if social.quoted else None,
    )


VIDEO_NOT_ANALYSED = "video not analysed"


def _readable_video(media: MediaRef) -> bool:
    """A video whose own file the adapter gives: the pipeline reads it (pipeline.video.reader);
    one with only a preview stays "video not analysed"."""
    return media.kind in VIDEO_KINDS and bool(media.video_url)


def _image(media: MediaRef) -> Image:
    """A photo with a URL is an image for the describer to look at. Anything else is described
    here and never fetched (an image with a description is not described again): a video or
    GIF without its own file as "video not analysed" (with why, when the adapter said), an
    attachment the adapter could not read by its note."""
    if media.kind == "photo" and media.url:
        return Image(source=media.url, alt_text=media.alt_text)
    if media.kind in VIDEO_KINDS:
        # The adapter's note says why no file was had (only HLS, over a cap, no PDS found).
        said = f"{VIDEO_NOT_ANALYSED} ({media.note})" if media.note else VIDEO_NOT_ANALYSED
    else:
        said = f"attachment not analysed ({media.note or media.kind})"
    if media.alt_text:
        said += f". Alt text: {media.alt_text}"
    return Image(source=media.url, alt_text=media.alt_text, description=said)


def target_post(summons: Summons) -> Post | None:
    """The post the bot was asked about, as the pipeline sees it. A summons that carries the
    claim itself has the mentions stripped, so "@factnote" is not taken for part of a claim."""
    if summons.target is None:
        return None
    post = to_post(summons.target, summons.platform)
    if summons.target_status is TargetStatus.SELF:
        post.text = strip_mentions(post.text)
    return post


def asked_about(summons: Summons) -> str:
    """Which post `target_post` gives, in words, for people reading a check's output."""
    if summons.target is None:
        return "nothing readable"
    if summons.target_status is TargetStatus.SELF:
        return "its own text (it quotes and answers no post)"
    which = "quoted" if summons.quoted_id else "parent"
    return f"the {which} post {summons.target.id} by @{summons.target.author}"


def mentions(text: str, handles: Iterable[str]) -> bool:
    """Whether the text mentions one of these accounts, read as the reader sees it (NFKC:
    a full-width "＠factnote" is a mention too)."""
    wanted = {h.lstrip("@").casefold() for h in handles if h}
    found = _MENTION_RE.findall(unicodedata.normalize("NFKC", text))
    return any(m[1:].rstrip(".-").casefold() in wanted for m in found)


def strip_mentions(text: str) -> str:
    return " ".join(_MENTION_RE.sub(" ", text).split())


def command_word(text: str) -> str:
    """The summons' text without mentions and punctuation, case-folded: "stop", "start", ...

    Read as the person typed it to be read: NFKC (full-width "ＳＴＯＰ"), hidden characters and
    punctuation dropped ("st<U+200B>op!"), runs of spaces as one ("opt   out"). An opt-out the
    user can see on screen must count, however the keyboard or app encoded it."""
    folded = strip_mentions(unicodedata.normalize("NFKC", text)).casefold()
    return " ".join(re.sub(r"[^\w\s]", "", folded).split())


def claim_key(text: str) -> str:
    """A key for "the same claim asked about again": case, spacing, mentions and links ignored."""
    normal = " ".join(_URL_RE.sub(" ", strip_mentions(text)).lower().split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()[:32]
