"""Claim analysis: is there a checkable claim, what must be verified, what to search for."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pipeline.context import CheckContext
from pipeline.llm.client import LLMClient
from pipeline.llm.prompts import ANALYZE_SYSTEM, analyze_user
from pipeline.post.describe import has_image_text, post_block
from pipeline.records import ClaimAnalysis, Post

TEXT_QUERIES = 3  # MUSE: 3 queries for text posts
IMAGE_QUERIES = 5  # and 5 when the post has images (MUSE)


class AnalysisAnswer(BaseModel):
    """The schema the LLM must answer with (sent as a JSON schema, validated on return)."""

    checkable: bool
    reason: str = Field(description="why the post is not checkable; empty when it is")
    claims: list[str]
    questions: list[str]
    queries: list[str]


def query_count(post: Post) -> int:
    quoted = post.quoted.images if post.quoted is not None else []
    return IMAGE_QUERIES if post.images or quoted or has_image_text(post) else TEXT_QUERIES


def analyze(ctx: CheckContext, llm: LLMClient, guidance: str = "") -> ClaimAnalysis:
    """`guidance`: experience memory for this call (`pipeline.learning.memory.Recall`), or ""."""
    n = query_count(ctx.post)
    user = analyze_user(post_block(ctx.post), n)
    answer = llm.structured(
        "analyze",
        system=ANALYZE_SYSTEM,
        user=f"{user}\n\n{guidance}" if guidance else user,
        schema=AnalysisAnswer,
        ledger=ctx.ledger,
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
    """Without an LLM: search with the post's own words and the text read in its images and
    videos, so retrieval still does real work."""
    read = [image.text for image in post.images if image.text]
    read += [video.text for video in post.videos if video.text]
    text = " ".join(" ".join([post.text, *read]).split())
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
