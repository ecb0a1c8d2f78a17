"""A database with requests in every state, their decisions, evidence, page snapshots, LLM
calls and review actions, written through the models and `add_decision` (the code the runtime
uses), for the review app, report, export and metrics tests."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from adapters.base import SocialPost, Summons, TargetStatus, jsonable
from pipeline.config import GuardConfig
from pipeline.records import (
    ClaimAnalysis,
    Decision,
    DecisionStatus,
    Document,
    DocumentUse,
    Evidence,
    GuardReport,
    LLMCall,
    Platform,
    RoundTrace,
    SearchResult,
    Stance,
    Tier,
    Trace,
    Verdict,
    utcnow,
)
from pipeline.reply import guard
from pipeline.web.urls import canonical_url
from storage.db import Database
from storage.models import Request, RequestState, ReviewAction
from storage.repositories import add_decision, create_cli_request
from testing.scenarios import POST

MINISTRY = "https://ministry.example/flu/lemon"
PAPER = "https://paper.example/lemon-remedy"
BLOG = "https://blog.example/lemons"
CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."
QUOTE_MINISTRY = "There is no evidence that lemon water kills influenza viruses in the throat."
QUOTE_PAPER = "Doctors say lemon water does not kill the flu virus"
PAGE_MINISTRY = (
    "Lemon water does not kill flu. " + QUOTE_MINISTRY + " Influenza viruses multiply inside "
    "airway cells, where a drink cannot reach them. <script>alert('page')</script>"
)
PAGE_PAPER = QUOTE_PAPER + "; vaccination protects best. Lemon water keeps people hydrated."


def reply_citing(url: str) -> str:
    return (
        "There is no evidence that lemon water kills flu viruses: they multiply inside airway "
        f"cells a drink cannot reach. {url}"
    )


REPLY = reply_citing(MINISTRY)
TIMINGS = {"analyze": 1.25, "research": 8.5, "write": 2.0, "guard": 0.01, "total": 11.76}


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _document(url: str, text: str, published: datetime) -> Document:
    return Document(
        url=url,
        canonical_url=canonical_url(url),
        ok=True,
        status_code=200,
        title=f"Page at {url}",
        text=text,
        published=published,
        word_count=len(text.split()),
        content_hash=_hash(text),
    )


def _evidence(
    url: str, tier: Tier, quote: str, page: str, published: datetime, stance: Stance
) -> Evidence:
    return Evidence(
        url=url,
        title=f"Page at {url}",
        domain=url.split("/")[2],
        tier=tier,
        stance=stance,
        confidence=0.9,
        quote=quote,
        relevance=0.7,
        published=published,
        content_hash=_hash(page),
    )


@dataclass
class Spec:
    """One seeded request."""

    name: str
    state: RequestState
    platform: str = "local"
    requester: str = "asker_demo"
    status: DecisionStatus | None = DecisionStatus.REPLY
    verdict: Verdict | None = Verdict.REFUTED
    tiers: tuple[Tier, ...] = (Tier.HIGH, Tier.MEDIUM)
    age_h: float = 2.0
    reasons: list[str] = field(default_factory=list)
    guard_problems: list[list[str]] = field(default_factory=list)  # failed drafts before
    cost_usd: float = 0.002
    reason: str = ""
    actions: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    target_text: str = CLAIM
    mode: str = "review"


@dataclass
class World:
    ids: dict[str, int]
    specs: dict[str, Spec]
    now: datetime


def _review_specs() -> list[Spec]:
    """Drafts waiting for review, one per platform, of different ages and verdicts."""
    return [
        Spec("review_local", RequestState.AWAITING_REVIEW, requester="alice_demo", age_h=3),
        Spec(
            "review_x",
            RequestState.AWAITING_REVIEW,
            platform="x",
            requester="bob_demo",
            verdict=Verdict.MISLEADING,
            tiers=(Tier.LOW,),
            age_h=30,
            target_text="Lemons cure every kind of flu within a day, says my aunt.",
        ),
        Spec(
            "review_bsky",
            RequestState.AWAITING_REVIEW,
            platform="bluesky",
            requester="carol_demo",
            tiers=(Tier.MEDIUM,),
            age_h=1,
            target_text="Hot water with lemon <b>destroys</b> viruses & bacteria alike.",
        ),
    ]


def _unanswered_specs() -> list[Spec]:
    """Requests that ended without a posted reply: dry run, abstentions, skip, failures."""
    return [
        Spec("dry_run", RequestState.DRY_RUN, mode="dry-run", age_h=50),
        Spec(
            "abstain_nee",
            RequestState.ABSTAINED,
            status=DecisionStatus.ABSTAIN,
            verdict=Verdict.NOT_ENOUGH_EVIDENCE,
            tiers=(Tier.LOW,),
            reasons=["not_enough_evidence: only one weak source"],
            mode="dry-run",
        ),
        Spec(
            "abstain_guard",
            RequestState.ABSTAINED,
            status=DecisionStatus.ABSTAIN,
            tiers=(Tier.HIGH,),
            reasons=["guard: thin_evidence: 1 independent source"],
            guard_problems=[["too_long: 301 > 280", "url_not_evidence: https://x.example/"]],
            mode="dry-run",
        ),
        Spec(
            "skipped",
            RequestState.SKIPPED,
            status=None,
            verdict=None,
            tiers=(),
            reason="user opted out",
            mode="dry-run",
        ),
        Spec(
            "failed",
            RequestState.FAILED,
            status=DecisionStatus.FAILED,
            verdict=None,
            tiers=(),
            reasons=["technical failure in research"],
            reason="failed after 3 attempt(s): SearchError",
            mode="dry-run",
        ),
        Spec(
            "needs_llm",
            RequestState.NEEDS_LLM,
            status=DecisionStatus.NEEDS_LLM,
            verdict=None,
            tiers=(),
            cost_usd=0.0,
            reason="needs an LLM endpoint",
            mode="dry-run",
        ),
    ]


def _moderated_specs() -> list[Spec]:
    """Drafts a moderator or the deadline took out of the queue without posting."""
    return [
        Spec(
            "rejected",
            RequestState.REJECTED,
            actions=[("mod_demo", "reject", {"reason": "wrong verdict", "note": ""})],
            reason="rejected by mod_demo: wrong verdict",
        ),
        Spec(
            "expired",
            RequestState.EXPIRED,
            actions=[("system", "expire", {})],
            reason="review deadline passed: abstained",
        ),
    ]


def _posted_specs() -> list[Spec]:
    """Replies posted after approval, one edited first and one approved as drafted."""
    return [
        Spec(
            "posted_edited",
            RequestState.POSTED,
            requester="dave_demo",
            actions=[
                ("mod_demo", "edit", {"before": REPLY, "after": REPLY + " Stay well."}),
                ("mod_demo", "approve", {"text": REPLY + " Stay well."}),
            ],
        ),
        Spec(
            "posted_as_is",
            RequestState.POSTED,
            tiers=(Tier.HIGH,),
            actions=[("admin_demo", "approve", {"text": REPLY})],
        ),
    ]


def default_specs(*, posted: bool = True) -> list[Spec]:
    specs = _review_specs() + _unanswered_specs() + _moderated_specs()
    if posted:
        specs += _posted_specs()
    else:
        specs.append(Spec("dry_run_2", RequestState.DRY_RUN, mode="dry-run", tiers=(Tier.HIGH,)))
    return specs


def _pages(spec: Spec, published: datetime) -> tuple[list[Evidence], list[Document]]:
    """One refuting page per tier the spec names, as evidence and as its snapshot."""
    pages = {
        Tier.HIGH: (MINISTRY, QUOTE_MINISTRY, PAGE_MINISTRY),
        Tier.MEDIUM: (PAPER, QUOTE_PAPER, PAGE_PAPER),
        Tier.LOW: (BLOG, "lemons are healthy", "Some say lemons are healthy for everyone."),
    }
    evidence = []
    documents = []
    for tier in spec.tiers:
        url, quote, page = pages[tier]
        evidence.append(_evidence(url, tier, quote, page, published, Stance.REFUTES))
        documents.append(_document(url, page, published))
    return evidence, documents


def _guard_trail(
    spec: Spec, platform: Platform, reply: str | None, evidence: list[Evidence]
) -> tuple[list[GuardReport], list[str]]:
    """The failed drafts the spec asks for, then the final reply checked by the real guard."""
    reports = [
        GuardReport(valid=False, platform=platform, length=301, limit=280, problems=problems)
        for problems in spec.guard_problems
    ]
    drafts = ["An earlier draft that failed." for _ in spec.guard_problems]
    if reply is not None:
        reports.append(
            guard.check_text(
                reply,
                platform,
                evidence_urls=[e.url for e in evidence],
                cfg=GuardConfig(),
            )
        )
        drafts.append(reply)
    return reports, drafts


def _llm_calls(spec: Spec) -> list[LLMCall]:
    # Two calls (analyze, write) sharing the cost: (step, prompt tokens, completion tokens, s).
    usage = [("analyze", 400, 80, 1.2), ("write", 600, 120, 1.9)] if spec.cost_usd else []
    return [
        LLMCall(
            step=step,
            model="fake-model",
            ok=True,
            prompt_tokens=prompt,
            completion_tokens=completion,
            latency_s=latency,
            cost_usd=spec.cost_usd / 2,
        )
        for step, prompt, completion, latency in usage
    ]


def _round(evidence: list[Evidence]) -> RoundTrace:
    """One research round that used every evidence page and dropped one page as too late."""
    return RoundTrace(
        round=1,
        queries=["lemon water flu virus", "hot drinks kill influenza"],
        results=[
            SearchResult(url=e.url, provider="local", query="lemon water flu virus", rank=i)
            for i, e in enumerate(evidence)
        ],
        documents=[
            DocumentUse(url=e.url, tier=e.tier, used=True, content_hash=e.content_hash)
            for e in evidence
        ]
        + [
            DocumentUse(
                url="https://late.example/",
                tier=Tier.HIGH,
                used=False,
                reason="published after as-of",
            )
        ],
    )


def _decision(spec: Spec, now: datetime) -> Decision:
    published = datetime(2026, 1, 10, 9, 0, tzinfo=now.tzinfo)
    evidence, documents = _pages(spec, published)
    reply = reply_citing(evidence[0].url) if spec.status is DecisionStatus.REPLY else None
    platform = {"x": Platform.X, "bluesky": Platform.BLUESKY}.get(spec.platform, Platform.X)
    reports, drafts = _guard_trail(spec, platform, reply, evidence)
    trace = Trace(
        analysis=ClaimAnalysis(
            checkable=True,
            claims=[spec.target_text],
            queries=["lemon water flu virus", "hot drinks kill influenza"],
        ),
        rounds=[_round(evidence)],
        llm_calls=_llm_calls(spec),
        guard=reports,
        drafts=drafts,
    )
    return Decision(
        status=spec.status or DecisionStatus.REPLY,
        verdict=spec.verdict,
        confidence=0.86 if spec.verdict else 0.0,
        platform=platform,
        reply=reply,
        urls=[evidence[0].url] if reply else [],
        evidence=evidence,
        reasons=spec.reasons or (["The ministry and a newspaper refute it."] if reply else []),
        as_of=now - timedelta(hours=spec.age_h),
        trace=trace,
        timings=dict(TIMINGS),
        documents=documents,
        error="SearchError in research: provider down"
        if spec.status is DecisionStatus.FAILED
        else None,
    )


def _summons(spec: Spec, created: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
    target = SocialPost(
        id=f"t-{spec.name}",
        author=f"claimer_{spec.name}",
        text=spec.target_text,
        created_at=created - timedelta(hours=1),
        url=f"https://social.example/{spec.name}",
        media=[],
    )
    summons = Summons(
        platform=spec.platform,
        id=f"s-{spec.name}",
        author=spec.requester,
        text="@factnote is this true?",
        created_at=created,
        parent_id=target.id,
        target=target,
        target_status=TargetStatus.OK,
    )
    return jsonable(summons), jsonable(target)


def seed(db: Database, specs: list[Spec] | None = None, now: datetime | None = None) -> World:
    moment = now or utcnow()
    chosen = specs if specs is not None else default_specs()
    ids: dict[str, int] = {}
    with db.transaction() as session:
        for spec in chosen:
            created = moment - timedelta(hours=spec.age_h)
            summons, target = _summons(spec, created)
            request = Request(
                platform=spec.platform,
                summons_id=summons["id"],
                requester=spec.requester,
                summons=summons,
                target=target,
                state=spec.state.value,
                mode=spec.mode,
                reason=spec.reason,
                attempts=1,
                created_at=created,
                updated_at=created,
            )
            session.add(request)
            session.flush()
            if spec.status is not None:
                decision = _decision(spec, moment)
                add_decision(session, request, decision)
                if decision.reply is not None:
                    request.reply_text = decision.reply
                if spec.status is DecisionStatus.ABSTAIN:
                    request.reason = "; ".join(decision.reasons)
            if spec.state is RequestState.AWAITING_REVIEW:
                request.review_deadline = created + timedelta(hours=24 if spec.age_h < 24 else 32)
            if spec.state is RequestState.POSTED:
                request.reply_id = f"local-{spec.name}"
                request.posted_at = created + timedelta(minutes=5)
                request.post_attempts = 1
            for actor, action, detail in spec.actions:
                session.add(
                    ReviewAction(
                        request_id=request.id,
                        actor=actor,
                        action=action,
                        detail=detail,
                        created_at=created + timedelta(minutes=1),
                    )
                )
                if action == "edit":
                    request.reply_text = detail["after"]
            ids[spec.name] = request.id
    return World(ids=ids, specs={s.name: s for s in chosen}, now=moment)


def seed_bot_request_and_check_run(db: Database) -> None:
    """One bot request (dry-run) and one `factnote check` run of `POST` with its decision:
    the two origins the export and the metrics tell apart."""
    seed(db, [Spec("bot", RequestState.DRY_RUN, mode="dry-run")])
    with db.transaction() as session:
        add_decision(
            session,
            create_cli_request(session, POST),
            Decision(status=DecisionStatus.NEEDS_LLM, platform=Platform.X, as_of=POST.created_at),
        )
