"""The local adapter: summons from files, replies to a JSONL outbox. No network, no keys.

Inbox: a directory of `*.json` files (one summons each) or one `.jsonl` file (one per line).
A summons is `{"id", "author", "text", "created_at", "parent": post|null, "quoted": post|null,
"images": [paths or URLs], "videos": [paths or URLs]}` and a post is `{"id", "author", "text",
"created_at"}`.
Outbox: one JSON line per reply, `{"reply_id", "in_reply_to", "text", "posted_at"}`, appended,
flushed and fsynced before `post_reply` returns, so a crash can never lose a reply that the
runtime was told about, and reconciliation can count what is really there.

A malformed or unreadable inbox entry does not stop the others: it becomes a summons keyed by
its place in the inbox (`malformed:FILE` or `malformed:FILE:LINE`) whose target is
`unavailable` with the problem as the reason, so it is recorded and skipped, not lost, and
never takes the id of a valid summons.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, ValidationError

from adapters.base import (
    AdapterConfig,
    FetchResult,
    MediaRef,
    PlatformError,
    RateBudget,
    ReplyReceipt,
    SocialPost,
    Summons,
    TargetStatus,
    storable,
)

PLATFORM = "local"
MAX_ENTRY_BYTES = 1_000_000  # a summons is a few kB; anything this large is not one
MAX_KEY_CHARS = 128  # requests.summons_id


# The `[local]` section of the settings: where the inbox is read and the outbox written.
class LocalAdapterConfig(AdapterConfig):
    enabled: bool = True
    inbox: str = "examples/inbox"
    outbox: str = "data/outbox.jsonl"
    poll_interval_s: float = 5.0


def _no_nul(text: str) -> str:
    # PostgreSQL text cannot hold U+0000: stored, it failed the poll's transaction on every
    # poll, for ever (issue 33). SQLite stores it, so the entry is refused on both alike.
    if "\x00" in text:
        raise ValueError("contains a NUL character (U+0000)")
    return text


Text = Annotated[str, AfterValidator(_no_nul)]


class _InboxPost(BaseModel):
    id: Text
    author: Text
    text: Text
    created_at: datetime
    images: list[Text] = []
    videos: list[Text] = []  # paths under the inbox folder, or URLs
    links: list[Text] = []


class _InboxSummons(_InboxPost):
    # The summons' id keys its request (requests.summons_id); a longer one failed to store
    # and logged a traceback on every poll (issue 33).
    id: Annotated[str, Field(max_length=MAX_KEY_CHARS), AfterValidator(_no_nul)]
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
        later are picked up. The cursor is the number of entries seen, for `status` only.

        An entry that cannot be read (not UTF-8, not a regular file, too large) or parsed is
        a skipped summons, never an exception: one bad file must not stop the others. Only an
        inbox that cannot be listed at all fails the poll (as a PlatformError)."""
        summons = [
            self._summons(where, raw) if problem is None else _malformed(where, raw, problem)
            for where, raw, problem in self._entries()
        ]
        return FetchResult(summons=summons, cursor=str(len(summons)))

    def _entries(self) -> list[tuple[str, str, str | None]]:
        """(where, text, why it is unreadable or None) for each inbox entry."""
        try:
            if not self.inbox.exists():
                return []
            if self.inbox.is_file():
                return self._lines(self.inbox.read_bytes())
            paths = sorted(self.inbox.glob("*.json"))
        except OSError as exc:
            raise PlatformError(
                f"local inbox {storable(str(self.inbox))}: {exc.strerror or exc}",
                retryable=True,
            ) from exc
        return [_read_entry(path) for path in paths]

    def _lines(self, data: bytes) -> list[tuple[str, str, str | None]]:
        # bytes.splitlines splits on \n and \r only; str.splitlines would also split inside
        # a JSON string holding U+2028 or a form feed, breaking a valid line in two.
        entries: list[tuple[str, str, str | None]] = []
        for n, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{_name(self.inbox)}:{n}"
            if len(line) > MAX_ENTRY_BYTES:
                entries.append((where, "", f"entry larger than {MAX_ENTRY_BYTES} bytes"))
                continue
            text, problem = _decode(line)
            entries.append((where, text, problem))
        return entries

    def read_summons(self, where: str, raw: str) -> Summons:
        """One inbox entry read as `fetch_summons` reads it (`factnote check --post-json`)."""
        return self._summons(where, raw)

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
            summons.target.media.extend(_video(video) for video in data.videos)
        return summons

    # -- replies ----------------------------------------------------------------------------

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        receipt = ReplyReceipt(reply_id=f"local-{uuid.uuid4().hex[:16]}", posted_at=_now())
        line = json.dumps(
            {
                "reply_id": receipt.reply_id,
                "in_reply_to": summons.id,
                "text": text,
                "links": list(links),  # what a platform that links by facets would link
                "posted_at": receipt.posted_at.isoformat(),
            },
            ensure_ascii=False,
        )
        self.outbox.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self.outbox.open("a", encoding="utf-8") as handle:
            handle.write(_after_torn_line(self.outbox) + line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return receipt

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        for entry in self.replies():
            if entry.get("in_reply_to") == summons.id:
                try:
                    posted_at = datetime.fromisoformat(str(entry.get("posted_at")))
                except ValueError:  # our reply is there; only its time is unreadable
                    posted_at = _now()
                return ReplyReceipt(reply_id=str(entry["reply_id"]), posted_at=_aware(posted_at))
        return None

    def replies(self) -> list[dict[str, Any]]:
        """The outbox's well-formed lines (a line torn by a crash mid-write is skipped, even
        one torn inside a multi-byte character)."""
        if not self.outbox.exists():
            return []
        out: list[dict[str, Any]] = []
        for line in self.outbox.read_bytes().splitlines():
            try:
                entry = json.loads(line.decode("utf-8"))
            except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
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
        media=[
            *(MediaRef(url=image) for image in data.images),
            *(_video(video) for video in data.videos),
        ],
    )


def _video(source: str) -> MediaRef:
    return MediaRef(url=source, kind="video", video_url=source)


def _read_entry(path: Path) -> tuple[str, str, str | None]:
    where = _name(path)
    try:
        # A directory, FIFO or device named *.json is not a summons (and reading a FIFO
        # would block the poll forever).
        if not path.is_file():
            return where, "", "not a regular file"
        if path.stat().st_size > MAX_ENTRY_BYTES:
            return where, "", f"file larger than {MAX_ENTRY_BYTES} bytes"
        data = path.read_bytes()
    except OSError as exc:
        return where, "", f"unreadable: {exc.strerror or exc}"
    text, problem = _decode(data)
    return where, text, problem


def _name(path: Path) -> str:
    """The file name as text: bytes that are not UTF-8 shown as `\\xff`."""
    return os.fsencode(path.name).decode("utf-8", "backslashreplace")


def _decode(data: bytes) -> tuple[str, str | None]:
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), None
    except UnicodeDecodeError as exc:
        return "", f"not UTF-8 text (byte {exc.start}: {exc.reason})"


def _malformed(where: str, raw: str, problem: str | ValidationError) -> Summons:
    """A summons we cannot read is still recorded, and skipped with the reason.

    It is keyed by its place in the inbox, never by an id read from it: an entry with a
    readable id but bad fields would otherwise take that id's request row, and the valid
    summons with the same id (fixed, or in another file) would be deduplicated away."""
    if isinstance(problem, ValidationError):
        problem = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}"
            for err in problem.errors()
        )
    ident = _readable_id(raw)
    said = f" (id {ident!r})" if ident else ""
    return Summons(
        platform=PLATFORM,
        id=_malformed_key(where),
        author="",
        text="",
        created_at=_now(),
        target_status=TargetStatus.UNAVAILABLE,
        target_reason=storable(f"malformed summons in {where}{said}: {problem}")[:500],
    )


def _readable_id(raw: str) -> str | None:
    """The entry's id, for the reason only; any parse failure (deep nesting included) is
    None."""
    if not raw or len(raw) > MAX_ENTRY_BYTES:
        return None
    try:
        loaded = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(loaded, dict) and isinstance(loaded.get("id"), str | int):
        return storable(str(loaded["id"]))[:100]
    return None


def _malformed_key(where: str) -> str:
    key = f"malformed:{where}"
    if len(key) <= MAX_KEY_CHARS:
        return key
    digest = hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]
    return f"{key[: MAX_KEY_CHARS - 17]}~{digest}"


def _after_torn_line(path: Path) -> str:
    """A newline when the outbox ends in a line torn by a crash, so the next reply starts
    a line of its own instead of being glued to (and lost with) the torn one."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return ""
            handle.seek(-1, os.SEEK_END)
            return "" if handle.read(1) == b"\n" else "\n"
    except FileNotFoundError:
        return ""


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _now() -> datetime:
    return datetime.now(UTC)
