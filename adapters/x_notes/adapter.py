"""The `x_notes` adapter: posts X flags as eligible for Community Notes come in as summons, and
a decided note goes out through `POST /2/notes`, exactly once, within the learned daily cap.

* `fetch_summons` reads the feed (not in time order, so there is no cursor: the request table's
  idempotency key on the post id is the record of posts seen). Triage without an LLM
  (`adapters.x_notes.triage`) turns skipped posts into summons whose target is `unavailable`
  with the reason, so they are recorded once and never asked about again; at most
  `max_drafts_per_poll` are handed to the pipeline, the rest come back in a later poll.
* `post_reply` submits: the stored evaluate score of the exact text must be above the floor
  (evaluated now if the text changed; an evaluate error never lets a note out), the daily cap
  must have room, the intent is recorded, then the POST. "User already created a note" is done.
* `find_reply` looks our note up in `notes_written` by post id (reconciliation after a crash).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import cast

from adapters.base import (
    FetchResult,
    PlatformError,
    RateBudget,
    RateLimited,
    ReplyReceipt,
    SocialPost,
    Summons,
    TargetStatus,
    VideoCaps,
    unreadable_summons,
)
from adapters.x.client import XClient
from adapters.x.posts import PostReader
from adapters.x_notes.api import EligiblePage
from adapters.x_notes.client import NoteInfo, NotesClient
from adapters.x_notes.errors import AlreadyNoted, DailyLimitReached
from adapters.x_notes.note_store import NoteStore, text_hash
from adapters.x_notes.triage import Candidate, ranked, skip_reason

log = logging.getLogger(__name__)

NAME = "x_notes"
MISLEADING = "misinformed_or_potentially_misleading"


@dataclass(frozen=True)
class NotesOptions:
    test_mode: bool = True
    post_selection: str = "feed_size:small"
    max_results: int = 100
    max_pages: int = 1
    max_age: timedelta = timedelta(hours=24)
    max_drafts_per_poll: int = 10
    floor: float = 0.5  # claim_opinion_score a note must exceed to be submitted
    initial_cap: int = 10  # notes a day until X tells us otherwise
    queue_ttl: timedelta = timedelta(hours=24)  # a note waiting for the cap expires after
    sync_interval: timedelta = timedelta(hours=3)  # between status syncs of our notes
    known_bots: Collection[str] = field(default_factory=tuple)
    # A video's file is chosen within the pipeline's caps (adapters.x.video).
    video_caps: VideoCaps = field(default_factory=VideoCaps)


class XNotesAdapter:
    name = NAME

    def __init__(
        self,
        client: NotesClient,
        store: NoteStore,
        options: NotesOptions,
        *,
        clock: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.store = store
        self.options = options
        self._clock = clock
        # PostReader.post only reads the page it is given; it never calls its client.
        self._reader = PostReader(
            cast(XClient, None),
            "",
            options.known_bots,
            max_pages=1,
            video_caps=options.video_caps,
        )

    # --- Reading the feed ----------------------------------------------------------------

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        now = self._clock()
        opts = self.options
        seen: set[str] = set()
        skipped: list[Summons] = []
        candidates: list[Candidate] = []
        for page in self.client.eligible_posts(
            test_mode=opts.test_mode,
            post_selection=opts.post_selection,
            max_results=opts.max_results,
            max_pages=opts.max_pages,
        ):
            skipped += self._unreadable(page, seen, now)
            for tweet in page.data:
                if tweet.id in seen:  # the feed repeats posts across pages
                    continue
                seen.add(tweet.id)
                post = self._reader.post(tweet, page.includes)
                shown = tweet.id in page.shown_notes
                reason = skip_reason(post, now=now, max_age=opts.max_age, note_shown=shown)
                if reason is None:
                    candidates.append(Candidate(post, page.note_requests.get(tweet.id, 0)))
                    continue
                skipped.append(self._summons(post, now, f"notes triage: {reason}"))
        chosen = ranked(candidates)[: opts.max_drafts_per_poll]
        self._sync_when_due(now)
        return FetchResult(summons=skipped + [self._summons(c.post, now) for c in chosen])

    def _unreadable(self, page: EligiblePage, seen: set[str], now: datetime) -> list[Summons]:
        """Feed items that could not be read: logged and recorded as skipped with why, once."""
        out = []
        for key, problem in page.unreadable:
            ident = key if key.isdigit() else f"malformed:x_notes:{key[:40]}"
            if ident in seen:
                continue
            seen.add(ident)
            log.warning("x_notes: feed item %s could not be read: %s", key, problem)
            out.append(unreadable_summons(NAME, ident, problem, created_at=now))
        return out

    def _summons(self, post: SocialPost, now: datetime, skip: str | None = None) -> Summons:
        # The summons is the feed's offer, made now; the post keeps its own time.
        return Summons(
            platform=NAME,
            id=post.id,
            author=post.author,
            author_id=post.author_id,
            text="",
            created_at=now,
            url=post.url,
            target=post,
            target_status=TargetStatus.OK if skip is None else TargetStatus.UNAVAILABLE,
            target_reason=skip or "",
            author_is_bot=post.author_is_bot,
            notes=[f"test_mode={self.options.test_mode}"],
        )

    # --- Status sync ---------------------------------------------------------------------

    def sync(self) -> int:
        """Our notes' statuses and evaluator buckets from `notes_written`."""
        written = list(self.client.notes_written(test_mode=self.options.test_mode))
        return self.store.apply_written(written, self.options.test_mode, self._clock())

    def _sync_when_due(self, now: datetime) -> None:
        last = self.store.last_synced(self.options.test_mode)
        if last is not None and now - last < self.options.sync_interval:
            return
        try:
            self.sync()
        except PlatformError as exc:  # the feed's summons matter more; sync next poll
            log.warning("x_notes: status sync failed: %s", exc)

    # --- Submitting ----------------------------------------------------------------------

    def evaluate(self, post_id: str, text: str) -> float:
        """Score the exact text and store it under its hash (errors are stored too)."""
        sha = text_hash(text)
        try:
            score = self.client.evaluate(post_id, text)
        except PlatformError as exc:
            self.store.record_score(post_id, sha, None, str(exc)[:500], self.options.test_mode)
            raise
        self.store.record_score(post_id, sha, score, None, self.options.test_mode)
        return score

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        opts = self.options
        now = self._clock()
        prepared = self.store.prepared(summons.id, opts.test_mode)
        if prepared is None or prepared.classification != MISLEADING:
            raise PlatformError(
                f"X notes: no misleading note prepared for post {summons.id}", retryable=False
            )
        score = self.store.score(summons.id, text_hash(text))
        if score is None:  # edited in review, or never scored: evaluate this exact text
            score = self.evaluate(summons.id, text)
        if score <= opts.floor:
            raise PlatformError(
                f"X notes: claim_opinion_score {score:g} is not above the floor {opts.floor:g}",
                retryable=False,
            )
        self._within_cap(now, prepared.drafted_at)
        self.store.mark_intent(summons.id, text, opts.test_mode, now)
        info = NoteInfo(text, MISLEADING, prepared.misleading_tags, prepared.trustworthy_sources)
        try:
            created = self.client.create_note(summons.id, info, test_mode=opts.test_mode)
        except AlreadyNoted:
            found = self.find_reply(summons)
            if found is None:
                return ReplyReceipt(reply_id=f"existing:{summons.id}", posted_at=now)
            return found
        except DailyLimitReached as exc:
            sent = self.store.submissions_since(now - timedelta(hours=24), opts.test_mode)
            self.store.learn_cap(len(sent), opts.test_mode, now)
            raise RateLimited(str(exc), reset_at=_cap_reset(sent, now)) from exc
        self.store.mark_submitted(summons.id, created.id, opts.test_mode, now)
        return ReplyReceipt(reply_id=created.id, posted_at=now)

    def _within_cap(self, now: datetime, drafted_at: datetime) -> None:
        opts = self.options
        learned = self.store.learned_cap(opts.test_mode)
        if learned is None:
            cap = opts.initial_cap  # X starts new writers at 10 a day
        elif now - learned[1] < timedelta(hours=24):
            cap = learned[0]
        else:
            # X's limit moves with the hit rate: a day after it was learned, the cap no longer
            # binds here, and X's next "daily limit" answer teaches the new one.
            return
        sent = self.store.submissions_since(now - timedelta(hours=24), opts.test_mode)
        if len(sent) < cap:
            return
        if now - drafted_at >= opts.queue_ttl:
            raise PlatformError(
                f"X notes: waited {opts.queue_ttl} for the daily cap of {cap}; expired",
                retryable=False,
            )
        raise RateLimited(
            f"X notes: daily cap of {cap} reached ({len(sent)} in 24 h)",
            reset_at=_cap_reset(sent, now),
        )

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        for note in self.client.notes_written(test_mode=self.options.test_mode):
            if note.post_id == summons.id:
                self.store.mark_submitted(
                    summons.id, note.id, self.options.test_mode, self._clock()
                )
                return ReplyReceipt(reply_id=note.id, posted_at=self._clock())
        return None

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        return []  # authority timelines are read by the `x` adapter

    def budgets(self) -> list[RateBudget]:
        b = self.client.budget
        return [
            RateBudget(endpoint="x_notes (own budget)", limit=b.limit, remaining=b.limit - b.used())
        ]


def _cap_reset(sent: list[datetime], now: datetime) -> datetime:
    """When the oldest submission of the last 24 h leaves the window."""
    return (min(sent) if sent else now) + timedelta(hours=24)
