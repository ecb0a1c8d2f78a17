"""The local adapter: summons from files, replies to a JSONL outbox. No network, no keys.

Inbox: a directory of `*.json` files (one summons each) or one `.jsonl` file (one per line).
A summons is `{"id", "author", "text", "created_at", "parent": post|null, "quoted": post|null,
"images": [paths or URLs]}` and a post is `{"id", "author", "text", "created_at"}`.
Outbox: one JSON line per reply, `{"reply_id", "in_reply_to", "text", "posted_at"}`, appended,
flushed and fsynced before `post_reply` returns, so a crash can never lose a reply that the
runtime was told about, and reconciliation can count what is really there.

A malformed inbox entry does not stop the others: it becomes a summons whose target is
`unavailable` with the parse error as the reason, so it is recorded and skipped, not lost.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from adapters.base import (
    FetchResult,
    MediaRef,
    RateBudget,
    ReplyReceipt,
    SocialPost,
    Summons,
    TargetStatus,
)

PLATFORM = "local"


class _InboxPost(BaseModel):
    id: str
    author: str
    text: str
    created_at: datetime
    images: list[str] = []
    links: list[str] = []


class _InboxSummons(_InboxPost):
    parent: _InboxPost | None = None
    quoted: _InboxPost | None = None


class LocalAdapter:
    name = PLATFORM

    def __init__(self, inbox: str | Path, outbox: str | Path, *, bot_handle: str = "factnote"):
        self.inbox = Path(inbox)
        self.outbox = Path(outbox)
        self.bot_handle = bot_handle
        self._lock = threading.Lock()

    # -- summons ----------------------------------------------------------------------------

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        """Every summons in the inbox, in file/line order. The inbox is re-read whole each
        time: idempotent intake (platform + id) makes re-reading safe, and files dropped in
        later are picked up. The cursor is the number of entries seen, for `status` only."""
        entries = list(self._entries())
        summons = [self._summons(where, raw) for where, raw in entries]
        return FetchResult(summons=summons, cursor=str(len(summons)))

    def _entries(self) -> list[tuple[str, str]]:
        if not self.inbox.exists():
            return []
        if self.inbox.is_file():
            lines = self.inbox.read_text(encoding="utf-8").splitlines()
            return [(f"{self.inbox.name}:{n}", line) for n, line in enumerate(lines, 1) if line]
        return [
            (path.name, path.read_text(encoding="utf-8"))
            for path in sorted(self.inbox.glob("*.json"))
        ]

    def _summons(self, where: str, raw: str) -> Summons:
        try:
            data = _InboxSummons.model_validate_json(raw)
        except ValidationError as exc:
            return _malformed(where, raw, exc)
        created = _aware(data.created_at)
        summons = Summons(
            platform=PLATFORM,
            id=data.id,
            author=data.author,
            text=data.text,
            created_at=created,
            parent_id=data.parent.id if data.parent else None,
            quoted_id=data.quoted.id if data.quoted else None,
            replies_to_bot=bool(data.parent and data.parent.author == self.bot_handle),
        )
        target = data.quoted or data.parent
        if target is None:
            summons.target = _post(data)
            summons.target_status = TargetStatus.SELF
        else:
            summons.target = _post(target)
            summons.target_status = TargetStatus.OK
            if data.quoted and data.parent:
                summons.target.quoted = _post(data.parent)
            # Posts in the inbox format carry no images; the summons' images are what the
            # person asks about (a screenshot, or the parent's picture).
            summons.target.media.extend(MediaRef(url=image) for image in data.images)
        return summons

    # -- replies ----------------------------------------------------------------------------

    def post_reply(self, summons: Summons, text: str) -> ReplyReceipt:
        receipt = ReplyReceipt(reply_id=f"local-{uuid.uuid4().hex[:16]}", posted_at=_now())
        line = json.dumps(
            {
                "reply_id": receipt.reply_id,
                "in_reply_to": summons.id,
                "text": text,
                "posted_at": receipt.posted_at.isoformat(),
            },
            ensure_ascii=False,
        )
        self.outbox.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self.outbox.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return receipt

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        for entry in self.replies():
            if entry.get("in_reply_to") == summons.id:
                return ReplyReceipt(
                    reply_id=str(entry["reply_id"]),
                    posted_at=datetime.fromisoformat(str(entry["posted_at"])),
                )
        return None

    def replies(self) -> list[dict[str, Any]]:
        """The outbox's well-formed lines (a line torn by a crash mid-write is skipped)."""
        if not self.outbox.exists():
            return []
        out: list[dict[str, Any]] = []
        for line in self.outbox.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and "in_reply_to" in entry and "reply_id" in entry:
                out.append(entry)
        return out

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        posts = [
            s.target
            for s in self.fetch_summons(None).summons
            if s.target is not None and s.target.author == user
        ]
        posts = [p for p in posts if since is None or p.created_at >= since]
        return sorted(posts, key=lambda p: p.created_at, reverse=True)[:limit]

    def budgets(self) -> list[RateBudget]:
        return []


def _post(data: _InboxPost) -> SocialPost:
    return SocialPost(
        id=data.id,
        author=data.author,
        text=data.text,
        created_at=_aware(data.created_at),
        links=list(data.links),
        media=[MediaRef(url=image) for image in data.images],
    )


def _malformed(where: str, raw: str, exc: ValidationError) -> Summons:
    """A summons we cannot read is still recorded: keyed by its id if one is readable, else
    by its place in the inbox, and skipped with the parse error as the reason."""
    try:
        loaded = json.loads(raw)
        ident = str(loaded["id"]) if isinstance(loaded, dict) and "id" in loaded else None
    except (json.JSONDecodeError, TypeError):
        ident = None
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in exc.errors()
    )
    return Summons(
        platform=PLATFORM,
        id=ident or f"malformed:{where}",
        author="",
        text="",
        created_at=_now(),
        target_status=TargetStatus.UNAVAILABLE,
        target_reason=f"malformed summons in {where}: {problems}"[:500],
    )


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _now() -> datetime:
    return datetime.now(UTC)
