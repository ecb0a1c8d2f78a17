"""Builders for the records tests make again and again: a post, an evidence item, the local
platform's summons file, and records with every field set off its default (for round trips,
where a field dropped on the way would otherwise go unnoticed). Each builder takes the fields a
test cares about and fills the rest with plain values; a test that needs something unusual
passes it rather than growing its own copy."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pipeline.records import (
    Decision,
    DecisionStatus,
    Document,
    Evidence,
    LLMCall,
    Passage,
    Platform,
    Post,
    Stance,
    Tier,
    Trace,
    Verdict,
)

# The moment the fully set records are dated: fractional seconds and a time zone, which a
# database column could lose.
WHEN = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)

# The claim the local summonses point at (testing.scenarios's corpus answers it).
CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."


def post(text: str, **fields: Any) -> Post:
    """A post saying `text`; `fields` set any other field (id, author, created_at, images...)."""
    return Post.model_validate(
        {"id": "p1", "author": "someone_demo", "text": text, "created_at": WHEN, **fields}
    )


def evidence(
    url: str,
    *,
    tier: Tier = Tier.HIGH,
    stance: Stance = Stance.REFUTES,
    confidence: float = 0.9,
    quote: str = "q",
    **fields: Any,
) -> Evidence:
    """An evidence item from `url`, by default a confident refutation from a high-tier page."""
    return Evidence(url=url, tier=tier, stance=stance, confidence=confidence, quote=quote, **fields)


def inbox_summons(
    sid: str,
    *,
    author: str = "asker_demo",
    text: str = "@factnote is this true?",
    parent_text: str | None = CLAIM,
    parent_author: str = "claimer_demo",
    parent_id: str | None = None,
) -> dict[str, Any]:
    """A summons as the local platform reads it from its inbox folder (docs/inbox.md):
    `author` asks about the parent post, which says `parent_text` (no parent when None)."""
    parent = (
        {
            "id": parent_id or f"p{sid}",
            "author": parent_author,
            "text": parent_text,
            "created_at": "2026-11-29T08:00:00Z",
        }
        if parent_text is not None
        else None
    )
    return {
        "id": sid,
        "author": author,
        "text": text,
        "created_at": "2026-11-29T09:00:00Z",
        "parent": parent,
        "quoted": None,
        "images": [],
    }


def write_inbox(inbox: Path, items: Iterable[dict[str, Any]]) -> None:
    """Each summons as `<id>.json` in the local platform's inbox folder."""
    inbox.mkdir(parents=True, exist_ok=True)
    for item in items:
        (inbox / f"{item['id']}.json").write_text(json.dumps(item), encoding="utf-8")


# --- records with every field set -------------------------------------------------------------


def full_evidence(url: str, position: int) -> Evidence:
    return Evidence(
        url=url,
        title=f"Title {position}",
        domain="ministry.example",
        tier=Tier.MEDIUM,
        stance=Stance.CONTEXT,
        confidence=0.75,
        quote=f"Quote {position}",
        relevance=0.5,
        published=WHEN - timedelta(days=position + 1),
        content_hash=f"{position:064d}",
        round=2,
        source="authority",
    )


def full_document() -> Document:
    return Document(
        url="https://ministry.example/a?utm=1",
        canonical_url="https://ministry.example/a",
        final_url="https://ministry.example/a/",
        ok=False,
        status_code=206,
        content_type="text/html",
        title="A page",
        text="Some text of the page.",
        published=WHEN - timedelta(days=3),
        date_source="meta",
        word_count=5,
        content_hash="ab" * 32,
        fetched_at=WHEN,
        error="partial",
    )


def full_llm_call(step: str) -> LLMCall:
    return LLMCall(
        step=step,
        model="model-x",
        ok=False,
        attempts=3,
        prompt_tokens=120,
        completion_tokens=45,
        latency_s=1.5,
        cost_usd=0.0125,
        error="timeout",
        started_at=WHEN,
    )


def full_decision() -> Decision:
    url = "https://ministry.example/a"
    result = {"url": url, "provider": "fake", "query": "q", "rank": 1, "tier": "high"}
    use = {"url": url, "tier": "high", "used": True, "relevance": 0.5}
    trace = {
        "analysis": {"checkable": True, "claims": ["c"], "queries": ["q"]},
        "rounds": [{"round": 1, "queries": ["q"], "results": [result], "documents": [use]}],
        "llm_calls": [full_llm_call("analyze"), full_llm_call("write")],
        "guard": [{"valid": True, "platform": "bluesky", "length": 40, "limit": 300}],
        "drafts": ["a draft"],
    }
    return Decision(
        status=DecisionStatus.ABSTAIN,
        verdict=Verdict.MISLEADING,
        confidence=0.625,
        platform=Platform.BLUESKY,
        reply=f"A reply {url}",
        urls=[url],
        evidence=[full_evidence(url, 0), full_evidence("https://b.example/", 1)],
        reasons=["one reason", "another"],
        lang="de",
        as_of=WHEN,
        trace=Trace.model_validate(trace),
        timings={"analyze": 1.25, "total": 3.5},
        documents=[full_document()],
        candidates=[Passage(url=url, index=2, text="p", score=0.5)],
        error="an error",
    )


def assert_no_defaults(record: BaseModel) -> None:
    """Every field holds a value other than its default, so a field the mapping dropped shows."""
    for name, info in type(record).model_fields.items():
        if not info.is_required():
            assert getattr(record, name) != info.get_default(call_default_factory=True), name
