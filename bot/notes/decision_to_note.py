"""Community Notes on top of a decision: which verdicts become notes, their tags, the live URL
check and the evaluate gate (`finish`, run by the worker through the `x_notes` spec); admission
progress and the status sync of written notes.

* A video-only post gets a note only when something was read from its video (keyframe text,
  speech, or a keyframe matching a fact-checked picture): its words alone were checked
  otherwise, and a note would judge a clip unseen (`unread_video`).
* Only `refuted` and `misleading` verdicts become notes, classified
  `misinformed_or_potentially_misleading`; anything else abstains (a not_misleading note cannot
  show and only dilutes the hit rate: docs/community-notes.md section 5).
* Tags come from a fixed table (`misleading_tags`), at most two; `trustworthy_sources` only when
  a High-tier source is cited.
* Every URL in the note must answer 200 when fetched live through the SSRF-guarded fetcher (X's
  UrlValidity evaluator does the same: twitter/communitynotes evaluator/url_evaluator.py).
* The exact text is evaluated (`POST /2/notes/evaluate`) and its score stored under the text's
  SHA-256; a score not above the floor abstains; an evaluate error sends the note to review,
  never out. Dry-run evaluates too, since it submits nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable

from adapters.base import VIDEO_KINDS, Adapter, PlatformError, Summons
from adapters.x_notes.adapter import MISLEADING, XNotesAdapter
from bot.config import Settings
from bot.notes.store import SqlNoteStore
from bot.platform_specs import Finished
from pipeline.config import FetchConfig
from pipeline.records import Decision, DecisionStatus, Stance, Tier, Verdict, utcnow
from pipeline.web.fetch import Fetcher
from pipeline.web.links import find_urls
from storage.db import Database
from storage.requests import request_id_for

log = logging.getLogger(__name__)

NOTE_VERDICTS = frozenset({Verdict.REFUTED, Verdict.MISLEADING})


# --- The tag table ---------------------------------------------------------------------------


def signals(decision: Decision) -> frozenset[str]:
    """What the decision says beyond its verdict, read from its records (never an LLM):
    `contested` (sources both support and refute), `altered_media` (an image match or reason
    says altered/manipulated), `outdated` (a reason says old facts are shown as new), `satire`."""
    found: set[str] = set()
    stances = {e.stance for e in decision.evidence}
    if Stance.SUPPORTS in stances and Stance.REFUTES in stances:
        found.add("contested")
    words = " ".join(decision.reasons).lower()
    images = json.dumps([i.model_dump(mode="json") for i in decision.trace.images]).lower()
    if any(w in images or w in words for w in ("altered", "manipulated", "doctored")):
        found.add("altered_media")
    if any(w in words for w in ("outdated", "old footage", "old photo", "no longer current")):
        found.add("outdated")
    if "satire" in words or "satirical" in words:
        found.add("satire")
    return frozenset(found)


def misleading_tags(verdict: Verdict | None, found: Iterable[str] = ()) -> tuple[str, ...]:
    """At most two tags from the verdict and the decision's signals; () means no note."""
    found = set(found)
    if verdict not in NOTE_VERDICTS:
        return ()
    if "satire" in found:
        first = "misinterpreted_satire"
    elif verdict is Verdict.REFUTED:
        first = "disputed_claim_as_fact" if "contested" in found else "factual_error"
    else:
        first = "missing_important_context"
    extra = [
        tag
        for signal, tag in (
            ("altered_media", "manipulated_media"),
            ("outdated", "outdated_information"),
        )
        if signal in found
    ]
    return (first, *extra)[:2]


def trustworthy(decision: Decision) -> bool:
    """Whether a High-tier source is cited in the note."""
    cited = set(decision.urls)
    text = decision.reply or ""
    return any(e.tier is Tier.HIGH and (e.url in cited or e.url in text) for e in decision.evidence)


# --- The gates -------------------------------------------------------------------------------


def url_answers_200(cfg: FetchConfig) -> Callable[[str], bool]:
    """A live check through the SSRF-guarded fetcher: the page must answer 200."""

    def check(url: str) -> bool:
        with Fetcher(cfg, cache_ttl_s=0) as fetcher:
            doc = fetcher.fetch(url)
        return doc.ok and doc.status_code == 200

    return check


def unread_video(summons: Summons, decision: Decision) -> str | None:
    """Why a video-only post gets no note although a verdict was reached: nothing was read from
    its video. None when something was, or when the post is not video-only (a post whose video
    file could not be had at all never gets here: the feed's triage skips it)."""
    post = summons.target
    if post is None or not post.media or not all(m.kind in VIDEO_KINDS for m in post.media):
        return None
    videos = decision.trace.videos
    if any(v.findings or v.transcript or any(k.matches for k in v.keyframes) for v in videos):
        return None
    why = "; ".join(f"{v.label}: {v.error}" for v in videos if v.error)
    said = "notes: video-only post and nothing was read from its video"
    return said + (f" ({why})" if why else "")


def _abstain(decision: Decision, reason: str) -> Finished:
    return Finished(
        decision.model_copy(
            update={"status": DecisionStatus.ABSTAIN, "reasons": [reason, *decision.reasons]}
        )
    )


def finish(
    db: Database,
    settings: Settings,
    adapter: Adapter | None,
    summons: Summons,
    decision: Decision,
    *,
    url_ok: Callable[[str], bool] | None = None,
) -> Finished:
    """The note gates on a decided reply (see the module docstring)."""
    if decision.status is not DecisionStatus.REPLY or not decision.reply:
        return Finished(decision)
    if not isinstance(adapter, XNotesAdapter):
        return _abstain(decision, "notes: the x_notes adapter is not running")
    unread = unread_video(summons, decision)
    if unread is not None:
        return _abstain(decision, unread)
    tags = misleading_tags(decision.verdict, signals(decision))
    if not tags:
        verdict = decision.verdict.value if decision.verdict else "none"
        return _abstain(decision, f"notes: a {verdict} verdict does not become a note")
    # Every URL a reader (and X's UrlValidity evaluator) sees in the text, and every cited one.
    urls = list(dict.fromkeys([*(u.raw for u in find_urls(decision.reply)), *decision.urls]))
    check = url_ok or url_answers_200(settings.fetch)
    dead = [u for u in urls if not check(u)]
    if dead or not urls:
        return _abstain(decision, f"notes: URL did not answer 200: {', '.join(dead) or 'none'}")
    cfg = settings.x_notes
    store = SqlNoteStore(db)
    store.prepare(
        summons.id,
        cfg.test_mode,
        request_id=_request_id(db, summons),
        classification=MISLEADING,
        tags=tags,
        trustworthy=trustworthy(decision),
        text=decision.reply,
        at=utcnow(),
    )
    try:
        score = adapter.evaluate(summons.id, decision.reply)
    except PlatformError as exc:
        # Fail closed: a note whose score is unknown waits for a moderator, never goes out.
        note = f"notes: evaluate failed, held for review: {exc}"
        held = decision.model_copy(update={"reasons": [note, *decision.reasons]})
        return Finished(held, mode="review" if settings.adapter_mode("x_notes") == "live" else None)
    if score <= cfg.floor:
        return _abstain(
            decision, f"notes: claim_opinion_score {score:g} is not above the floor {cfg.floor:g}"
        )
    note = f"notes: claim_opinion_score {score:g}; tags {', '.join(tags)}"
    return Finished(decision.model_copy(update={"reasons": [*decision.reasons, note]}))


def _request_id(db: Database, summons: Summons) -> int | None:
    with db.session() as session:
        return request_id_for(session, summons.platform, summons.id)
