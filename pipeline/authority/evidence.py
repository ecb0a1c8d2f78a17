"""Evidence from the authorities' own statements, before any web search (CLEF 2024 Task 5).

When the authority index holds statements, the relevant authorities' statements published
before the post are retrieved; with an LLM the best few are judged and those that support or
refute become evidence, without one they are kept as candidate passages. Either way what was
considered goes into the first round's trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.authority.retrieval import (
    AuthorityStance,
    RetrievedStatement,
    StanceJudgement,
    judge_stances,
    relevant_accounts,
    to_evidence,
)
from pipeline.context import CheckContext
from pipeline.llm.prompts import cut_text
from pipeline.records import ClaimAnalysis, DocumentUse, Evidence, Passage, SkipReason, Tier
from pipeline.shared_parts import SharedParts


@dataclass
class AuthorityFindings:
    evidence: list[Evidence] = field(default_factory=list)
    candidates: list[Passage] = field(default_factory=list)  # without an LLM
    uses: list[DocumentUse] = field(default_factory=list)  # what was considered, for the trace


def authority_evidence(
    shared: SharedParts, ctx: CheckContext, analysis: ClaimAnalysis
) -> AuthorityFindings:
    """Statements of the relevant authorities published before the post: evidence (with an
    LLM), or candidate passages (without); and what was considered, for the trace."""
    index = shared.authority_index
    if index is None or len(index) == 0:
        return AuthorityFindings()
    cfg = shared.cfg.authority
    text = " ".join([ctx.post.text, *analysis.claims])
    accounts = relevant_accounts(text, cfg.accounts, index.accounts())
    found = [
        r
        for r in index.retrieve(text, accounts, before=ctx.post.created_at, k=cfg.k)
        if r.dense >= cfg.min_similarity
    ]
    if not found:
        return AuthorityFindings()
    if not ctx.use_llm:
        return _candidates(found)
    claim = "; ".join(analysis.claims) or ctx.post.text
    judgements = judge_stances(
        claim,
        found,
        shared.llm,
        ctx.ledger,
        concurrency=shared.cfg.research.concurrency,
        max_chars=shared.cfg.llm.max_post_chars,
    )
    findings = AuthorityFindings()
    for judgement in judgements:
        item, use = _judged(judgement, shared.cfg.llm.max_post_chars)
        findings.uses.append(use)
        if item is not None:
            findings.evidence.append(item)
    return findings


def _candidates(found: list[RetrievedStatement]) -> AuthorityFindings:
    passages = [
        Passage(url=r.statement.url, index=0, text=r.statement.text, score=r.dense) for r in found
    ]
    uses = [
        DocumentUse(
            url=r.statement.url,
            tier=Tier.AUTHORITY,
            used=False,
            reason=SkipReason.AUTHORITY_NEEDS_LLM,
            relevance=round(r.dense, 4),
            published=r.statement.created_at,
        )
        for r in found
    ]
    return AuthorityFindings(candidates=passages, uses=uses)


def _judged(judgement: StanceJudgement, limit: int) -> tuple[Evidence | None, DocumentUse]:
    item = to_evidence(judgement)
    statement = judgement.retrieved.statement
    cut = len(statement.text) > limit
    if item is not None and cut:  # the writer sees what the stance judge saw
        item = item.model_copy(update={"quote": cut_text(item.quote, limit)})
    reason = (
        f"authority @{statement.account}: {judgement.stance.value} ({judgement.confidence:.2f})"
        if judgement.stance is not AuthorityStance.NOT_ENOUGH_INFO
        else f"authority @{statement.account}: says nothing on the claim"
    )
    if cut:
        reason += (
            f" (statement cut to {limit:,} of {len(statement.text):,} characters for "
            "the LLM prompts)"
        )
    use = DocumentUse(
        url=statement.url,
        tier=Tier.AUTHORITY,
        used=item is not None,
        reason=reason,
        relevance=round(judgement.retrieved.dense, 4),
        published=statement.created_at,
    )
    return item, use
