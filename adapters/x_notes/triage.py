"""Which eligible posts are worth a note, decided without an LLM.

Skipped: posts older than `max_age` (notes on posts over a day old are near-worthless:
Goodheart-Labs/cn-return-bot docs/things-we-know-2026-07-30.md), video-only posts (no video
analysis yet; the template writer drops them too), and posts whose media cannot be read. Posts
we already noted never come back as new requests (the request table's idempotency key). The
rest are ordered: posts with note requests first, then the freshest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from adapters.base import VIDEO_KINDS, SocialPost


@dataclass(frozen=True)
class Candidate:
    post: SocialPost
    note_requests: int = 0


def skip_reason(post: SocialPost, *, now: datetime, max_age: timedelta) -> str | None:
    """Why this post gets no note, or None."""
    if now - post.created_at > max_age:
        hours = (now - post.created_at).total_seconds() / 3600
        return f"older than {max_age.total_seconds() / 3600:g} h ({hours:.1f} h)"
    if post.media and all(m.kind in VIDEO_KINDS for m in post.media):
        return "video-only post (video is not analysed)"
    unreadable = [m for m in post.media if m.kind not in VIDEO_KINDS and (not m.url or m.note)]
    if unreadable:
        return "media we cannot read"
    return None


def ranked(candidates: list[Candidate]) -> list[Candidate]:
    """Note-requested posts first, then the freshest."""
    return sorted(candidates, key=lambda c: (c.note_requests == 0, -c.post.created_at.timestamp()))
