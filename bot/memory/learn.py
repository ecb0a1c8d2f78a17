"""Turning finished episodes into memory: the judge's feedback and moderators' actions.

Moderator actions are already recorded by `bot.moderation.actions` in `review_actions` (an edit with
the text before and after, a rejection with its reason and note, an approval with the text), so
learning from them reads that history rather than hooking into the review transaction: a
moderator's click never waits on an LLM call, and review behaviour stays exactly as it was.
`learn_from_reviews` distills every action not yet distilled (each is marked in
`memory_sources`, so a rerun never learns twice); `learn_from_judgment` does the same for a
judged decision and credits the items that decision used.

`ScheduledLearning` is the running bot's periodic job (`schedule_learning`, every
`runtime.memory_learn_interval_s`, in memory mode "learn" only): it catches up with the admins'
changes, distills new moderator actions, judges up to `runtime.memory_judge_per_run` new
decisions and learns from them, distills stored judgments a failed call left undistilled, and
deletes what decayed. It works on the bot's own bank, so what it learns is retrieved at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apscheduler.job import Job
from apscheduler.schedulers.base import BaseScheduler
from pydantic import ValidationError

from bot.config import Settings
from bot.memory.store import StoredMemory, distilled, judgment_from_row, save_judgment
from pipeline.learning.judge import JUDGED_STATUSES, Judge, Judgment
from pipeline.learning.memory import Episode, MemoryItem, distill, edit_diff
from pipeline.learning.memory_checks import stranger_texts
from pipeline.llm.client import CallLedger, LLMClient, LLMError
from pipeline.records import Decision, Post
from storage import memory as memory_db
from storage.db import Database
from storage.models import Request as RequestRow
from storage.models import ReviewAction
from storage.repositories import decision_from_row, latest_decision

log = logging.getLogger(__name__)

LEARNED_ACTIONS = ("approve", "edit", "reject")
JOB_ID = "memory-learn"


@dataclass
class LearnReport:
    episodes: int = 0
    items: int = 0
    failures: int = 0


def learn_from_judgment(
    memory: StoredMemory,
    llm: LLMClient,
    ledger: CallLedger,
    *,
    source: str,
    decision: Decision,
    judgment: Judgment,
    post: Post | None = None,
) -> list[MemoryItem]:
    """Credits the items `decision` used by the judged mode, then distills the episode."""
    memory.credit([use.id for use in decision.trace.memory], judgment.mode)
    if memory.cfg.mode != "learn" or source in distilled(memory.db, [source]):
        return []
    strangers = stranger_texts(post, decision)
    items = distill(llm, ledger, Episode.judged(source, decision, judgment, strangers), memory.cfg)
    return memory.learn(items, source)


def review_episode(
    action: ReviewAction, decision: Decision | None, post: Post | None = None
) -> Episode:
    detail = action.detail or {}
    reply = decision.reply if decision else None
    if action.action == "edit":
        feedback = "moderator edit: " + edit_diff(
            str(detail.get("before") or ""), str(detail.get("after") or "")
        )
    elif action.action == "reject":
        note = str(detail.get("note") or "")
        feedback = f"moderator rejected: {detail.get('reason', '')}" + (
            f" ({note})" if note else ""
        )
    else:
        reply = str(detail.get("text") or reply or "")
        feedback = "moderator approved the reply as written"
    return Episode(
        source=f"review:{action.id}",
        signal=action.action,  # type: ignore[arg-type]  # one of LEARNED_ACTIONS
        claims=decision.trace.analysis.claims if decision and decision.trace.analysis else (),
        queries=[q for r in decision.trace.rounds for q in r.queries] if decision else (),
        reply=reply,
        feedback=feedback,
        actor=action.actor,
        strangers=stranger_texts(post, decision),
    )


def _distill_each(
    episodes: list[Episode],
    memory: StoredMemory,
    llm: LLMClient,
    ledger: CallLedger,
    report: LearnReport,
) -> LearnReport:
    """One distillation call per episode; a failed call is counted and leaves the episode
    undistilled, so the next run tries it again."""
    for episode in episodes:
        try:
            items = distill(llm, ledger, episode, memory.cfg)
        except LLMError:
            report.failures += 1
            continue
        report.episodes += 1
        report.items += len(memory.learn(items, episode.source))
    return report


def learn_from_reviews(
    db: Database, memory: StoredMemory, llm: LLMClient, ledger: CallLedger, *, limit: int = 50
) -> LearnReport:
    """Distills up to `limit` moderator actions not yet learned from, oldest first. A failed
    LLM call leaves its action for the next run."""
    report = LearnReport()
    if memory.cfg.mode != "learn":
        return report
    with db.session() as session:
        actions = memory_db.review_actions(session, LEARNED_ACTIONS)
        done = distilled(db, [f"review:{a.id}" for a in actions])
        pending = [a for a in actions if f"review:{a.id}" not in done][:limit]
        episodes = [
            review_episode(
                a,
                latest_decision(session, a.request_id),
                checked_post(session.get(RequestRow, a.request_id)),
            )
            for a in pending
        ]
    return _distill_each(episodes, memory, llm, ledger, report)


def checked_post(request: RequestRow | None) -> Post | None:
    """The checked post with its parent, quote and images, as stored with its request: what
    strangers wrote in the episode. Falls back to `target_post` for an older shape."""
    target = request.target if request is not None else None
    try:
        return Post.model_validate(target) if target else None
    except ValidationError:
        return target_post(target)


def target_post(target: dict[str, Any] | None) -> Post | None:
    """The checked post as stored with its request (a platform post or a CLI post)."""
    if not target:
        return None
    fields = ("id", "author", "text", "created_at", "links")
    try:
        return Post.model_validate({k: target[k] for k in fields if k in target})
    except ValidationError:
        return None


def judge_decisions(
    db: Database,
    memory: StoredMemory,
    judge: Judge,
    ledger: CallLedger,
    *,
    limit: int = 50,
) -> LearnReport:
    """Judges the latest replies and abstentions not judged yet (newest first), stores each
    judgment with its decision, and learns from it (`learn_from_judgment`)."""
    report = LearnReport()
    with db.session() as session:
        statuses = [s.value for s in JUDGED_STATUSES]
        rows = memory_db.unjudged_decisions(session, statuses, limit)
        work = [(r.id, decision_from_row(r), checked_post(r.request)) for r in rows]
    for decision_id, decision, post in work:
        if post is None:
            continue
        try:
            judgment = judge.judge(post, decision, ledger)
            if judgment is None:
                continue
            save_judgment(db, decision_id, judgment)
            report.episodes += 1
            items = learn_from_judgment(
                memory,
                judge.llm,
                ledger,
                source=f"decision:{decision_id}",
                decision=decision,
                judgment=judgment,
                post=post,
            )
        except LLMError:
            report.failures += 1
            continue
        report.items += len(items)
    return report


def learn_from_judgments(
    db: Database, memory: StoredMemory, llm: LLMClient, ledger: CallLedger, *, limit: int = 50
) -> LearnReport:
    """Distills stored judgments whose decision was never distilled (its distillation call
    failed, or another command stored it), oldest first. The items the decision used were
    credited when it was judged, so they are not credited again."""
    report = LearnReport()
    if memory.cfg.mode != "learn":
        return report
    with db.session() as session:
        rows = memory_db.undistilled_judgments(session, limit)
        work = {
            d.id: (decision_from_row(d), judgment_from_row(j), checked_post(d.request))
            for j, d in rows
        }
    episodes = [
        Episode.judged(
            f"decision:{decision_id}", decision, judgment, stranger_texts(post, decision)
        )
        for decision_id, (decision, judgment, post) in work.items()
    ]
    return _distill_each(episodes, memory, llm, ledger, report)


@dataclass
class LearningRun:
    """What one scheduled run did."""

    reviews: LearnReport = field(default_factory=LearnReport)
    judged: LearnReport = field(default_factory=LearnReport)
    judgments: LearnReport = field(default_factory=LearnReport)
    decayed: int = 0
    llm_calls: int = 0
    cost_usd: float = 0.0

    def line(self) -> str:
        return (
            f"memory learning: moderator actions {self.reviews.episodes}, judged "
            f"{self.judged.episodes}, items {self.reviews.items + self.judged.items}"
            f" (+{self.judgments.items} from earlier judgments), failures "
            f"{self.reviews.failures + self.judged.failures + self.judgments.failures}, "
            f"decayed {self.decayed}; {self.llm_calls} LLM call(s), ${self.cost_usd:.4f}"
        )


class ScheduledLearning:
    """The periodic learning job over the running bot's bank (see the module doc). `llm`
    defaults to the judge's endpoint (`[judge]`, else `[llm]`)."""

    def __init__(
        self, settings: Settings, memory: StoredMemory, llm: LLMClient | None = None
    ) -> None:
        self.memory = memory
        self.llm = llm or LLMClient(settings.judge.llm_config(settings.llm))
        self.judge = Judge(self.llm, settings.guard, seed=settings.judge.seed)
        self.judge_per_run = settings.runtime.memory_judge_per_run

    def run(self) -> LearningRun | None:
        """One run; None when there is nothing to learn with (memory not in "learn" mode, or
        no LLM endpoint: distilling needs one)."""
        if self.memory.cfg.mode != "learn" or not self.llm.configured:
            return None
        db, ledger, done = self.memory.db, CallLedger(), LearningRun()
        self.memory.refresh()
        done.reviews = learn_from_reviews(db, self.memory, self.llm, ledger)
        if self.judge_per_run:
            done.judged = judge_decisions(
                db, self.memory, self.judge, ledger, limit=self.judge_per_run
            )
        done.judgments = learn_from_judgments(db, self.memory, self.llm, ledger)
        done.decayed = len(self.memory.decay())
        done.llm_calls, done.cost_usd = ledger.count, ledger.cost_usd
        log.info("%s", done.line())
        return done


def schedule_learning(
    scheduler: BaseScheduler,
    settings: Settings,
    memory: object,
    *,
    llm: LLMClient | None = None,
    wrap: Callable[[Callable[[], object]], Callable[[], None]] | None = None,
) -> Job | None:
    """Adds the learning job to the bot's scheduler (`wrap`ped like the bot's other jobs);
    None, nothing added, when memory is not learning, is not this database's, or the
    interval is 0."""
    interval = settings.runtime.memory_learn_interval_s
    if interval <= 0 or not isinstance(memory, StoredMemory) or memory.cfg.mode != "learn":
        return None
    job = ScheduledLearning(settings, memory, llm)
    run = wrap(job.run) if wrap else job.run
    return scheduler.add_job(run, "interval", seconds=interval, id=JOB_ID, name=JOB_ID)
