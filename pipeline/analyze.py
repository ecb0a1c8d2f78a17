"""Claim analysis: is there a checkable claim, what must be verified, what to search for."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pipeline.describe import has_image_text, post_block
from pipeline.llm import CallLedger, LLMClient
from pipeline.prompts import ANALYZE_SYSTEM, analyze_user
from pipeline.records import ClaimAnalysis, Post

TEXT_QUERIES = 3  # MUSE: 3 queries for text posts
IMAGE_QUERIES = 5  # and 5 when images are described


class AnalysisAnswer(BaseModel):
    """The schema the LLM must answer with (sent as a JSON schema, validated on return)."""

    checkable: bool
    reason: str = Field(description="why the post is not checkable; empty when it is")
    claims: list[str]
    questions: list[str]
    queries: list[str]


def query_count(post: Post) -> int:
    return IMAGE_QUERIES if has_image_text(post) else TEXT_QUERIES


def analyze(post: Post, llm: LLMClient, ledger: CallLedger) -> ClaimAnalysis:
    n = query_count(post)
    answer = llm.structured(
        "analyze",
        system=ANALYZE_SYSTEM,
        user=analyze_user(post_block(post), n),
        schema=AnalysisAnswer,
        ledger=ledger,
    )
    queries = _clean(answer.queries)[:n]
    claims = _clean(answer.claims)[:3]
    if answer.checkable and not queries:
        # A checkable post with nothing to search for cannot be checked; fall back to its claims
        # rather than silently searching nothing.
        queries = claims[:n]
    checkable = answer.checkable and bool(queries)
    return ClaimAnalysis(
        checkable=checkable,
        claims=claims if checkable else [],
        questions=_clean(answer.questions)[:4] if checkable else [],
        queries=queries if checkable else [],
        reason=answer.reason.strip()
        if not answer.checkable
        else ("" if checkable else "no claim or query could be derived from the post"),
    )


def fallback_analysis(post: Post) -> ClaimAnalysis:
    """Without an LLM: search with the post's own words, so retrieval still does real work."""
    text = " ".join(post.text.split())
    return ClaimAnalysis(checkable=True, claims=[text], queries=[text[:200]] if text else [])


def _clean(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        text = " ".join(item.split())
        key = text.lower()
        if text and key not in seen and key != "none":
            seen.add(key)
            out.append(text)
    return out
