"""The reply writer: a short text for the target platform, citing evidence URLs only.

The LLM drafts; the guard (plain code) judges. A draft that breaks a text rule is sent back with
the guard's problems, at most `max_rewrites` times; the caller turns a draft that never passes
into an abstention.

The first draft may already exist: the evidence extractor drafts a reply when its quotes settle
the post (`research.draft_with_evidence`). `early_draft` takes it in place of the writing call
only when it rests on what the writer would have been given: the same verdict, every evidence
item the writer would see either from a page that call read or shown to it as evidence already
found, and every quote of that call found on its page. Otherwise the writer drafts as usual.
Either way the guard judges the text.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from pipeline.context import CheckContext
from pipeline.llm.client import LLMClient
from pipeline.llm.prompts import WRITE_SYSTEM, write_user
from pipeline.llm.prompts import evidence_blocks as prompt_blocks
from pipeline.post.describe import post_block
from pipeline.records import EarlyDraft, Evidence, EvidenceSource, Platform, Verdict
from pipeline.reply.formats import reply_format
from pipeline.web.urls import canonical_url

VERDICT_WORDING = {
    Verdict.REFUTED: "refuted: the evidence contradicts the post",
    Verdict.MISLEADING: "misleading: the post leaves out context readers need",
    Verdict.SUPPORTED: "supported: the evidence confirms the post",
}

MAX_EVIDENCE_IN_PROMPT = 4  # a reply cites one or two sources; the best four are plenty


class DraftAnswer(BaseModel):
    text: str


def evidence_key(item: Evidence) -> str:
    """One evidence item: its page and its quote."""
    return f"{canonical_url(item.url)} {item.quote}"


def writing_rules(platform: Platform, lang: str | None) -> str:
    """The platform's budget and the reply's language, for whichever call drafts the reply."""
    return f"{reply_format(platform).prompt_rules}\n\nLanguage: {lang or 'same as the post'}"


def early_draft(
    drafts: Sequence[EarlyDraft], verdict: Verdict, evidence: Sequence[Evidence]
) -> EarlyDraft | None:
    """The extractor's draft that can stand in for the writer's, if any (see the module doc).
    `evidence` is in `writer_order`."""
    shown = list(evidence[:MAX_EVIDENCE_IN_PROMPT])
    if not shown:
        return None
    for draft in drafts:
        read, known = set(draft.page_urls), set(draft.known)
        if (
            draft.verdict is verdict
            and draft.complete
            and all(canonical_url(e.url) in read or evidence_key(e) in known for e in shown)
        ):
            return draft
    return None


def evidence_blocks(evidence: Sequence[Evidence]) -> list[str]:
    """Evidence for the writer, already in `writer_order` (facts listed first are used first)."""
    return prompt_blocks(evidence[:MAX_EVIDENCE_IN_PROMPT])


def writer_order(evidence: Sequence[Evidence]) -> list[Evidence]:
    """Matched fact-checks first, then the rest as given (by tier, then relevance): the writer
    leans on the first items."""
    return [e for e in evidence if e.source == EvidenceSource.FACT_CHECK] + [
        e for e in evidence if e.source != EvidenceSource.FACT_CHECK
    ]


def draft_reply(
    ctx: CheckContext,
    llm: LLMClient,
    *,
    verdict: Verdict,
    evidence: Sequence[Evidence],
    feedback: str | None = None,
    previous: str | None = None,
    guidance: str = "",
) -> str:
    """A reply to `ctx.post` for its platform and language; `feedback` (the guard's problems)
    and `previous` (the draft they are about) ask for a rewrite. `guidance`: experience memory
    for this call (`pipeline.learning.memory.Recall`), or ""."""
    user = write_user(
        post_block(ctx.post),
        VERDICT_WORDING.get(verdict, verdict.value),
        evidence_blocks(evidence),
        writing_rules(ctx.platform, ctx.lang),
        feedback,
        previous,
    )
    answer = llm.structured(
        "write" if feedback is None else "rewrite",
        system=WRITE_SYSTEM,
        user=f"{user}\n\n{guidance}" if guidance else user,
        schema=DraftAnswer,
        ledger=ctx.ledger,
    )
    return answer.text.strip()
