"""Which eligible posts are worth a note, decided without an LLM.

Skipped: posts older than `max_age` (notes on posts over a day old are near-worthless:
Goodheart-Labs/cn-return-bot docs/things-we-know-2026-07-30.md), posts dated in the future
(beyond `FUTURE_SKEW`: X cannot have served a post not yet written, so the date is wrong, and
"freshest first" would put it above every real post), posts whose media already carry a shown
note (`matched_media_notes`), video-only posts with no video file to read (X offered no MP4
variant, or none within the pipeline's caps: the attachment's note says which; X's template
writer drops every video post, and so would we with nothing read), and posts whose media cannot
be read. A video-only post with a file goes on: the pipeline reads its keyframes (and speech),
and when nothing could be read from it the decision says so and no note is written (the
pipeline's "not checkable" abstention, and `bot.notes.decision_to_note.finish` for a post whose
words alone were checked). Posts we already noted never come back
as new requests (the request table's idempotency key). The rest are ordered: posts with note
requests first, then the freshest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from adapters.base import VIDEO_KINDS, SocialPost

# Clocks differ a little; a post dated further ahead than this is refused.
FUTURE_SKEW = timedelta(minutes=10)


@dataclass(frozen=True)
class Candidate:
    post: SocialPost
    note_requests: int = 0


def skip_reason(
    post: SocialPost, *, now: datetime, max_age: timedelta, note_shown: bool = False
) -> str | None:
    """Why this post gets no note, or None."""
    if post.created_at - now > FUTURE_SKEW:
        hours = (post.created_at - now).total_seconds() / 3600
        return f"dated {hours:.1f} h in the future ({post.created_at.isoformat()})"
    if now - post.created_at > max_age:
        hours = (now - post.created_at).total_seconds() / 3600
        return f"older than {max_age.total_seconds() / 3600:g} h ({hours:.1f} h)"
    if note_shown:
        return "a note on this post's media is already shown (matched_media_notes)"
    video_only = bool(post.media) and all(m.kind in VIDEO_KINDS for m in post.media)
    if video_only and not any(m.video_url for m in post.media):
        why = "; ".join(m.note for m in post.media if m.note) or "none offered"
        return f"video-only post with no video file to read ({why})"
    unreadable = [m for m in post.media if m.kind not in VIDEO_KINDS and (not m.url or m.note)]
    if unreadable:
        return "media we cannot read"
    return None


def ranked(candidates: list[Candidate]) -> list[Candidate]:
    """Note-requested posts first, then the freshest."""
    return sorted(candidates, key=lambda c: (c.note_requests == 0, -c.post.created_at.timestamp()))
