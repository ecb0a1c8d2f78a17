"""The reply writer: a short text for the target platform, citing evidence URLs only.

The LLM drafts; the guard (plain code) judges. A draft that breaks a text rule is sent back with
the guard's problems, at most `max_rewrites` times; the caller turns a draft that never passes
into an abstention.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from pipeline.llm import CallLedger, LLMClient
from pipeline.prompts import WRITE_SYSTEM, quote_untrusted, write_user
from pipeline.records import Evidence, Platform, Verdict

PLATFORM_RULES = {
    Platform.X: (
        "Platform: an X reply. Budget: at most 280 characters, where each URL counts as 23 "
        "characters and CJK characters and emoji count double. Aim for 250."
    ),
    Platform.BLUESKY: (
        "Platform: a Bluesky reply. Budget: at most 300 characters including full URLs. "
        "Aim for 270."
    ),
    Platform.NOTES: (
        "Platform: an X Community Note. Budget: at most 280 characters, where each URL counts "
        "as 1 character. It must contain at least one URL. Neutral encyclopedic tone; do not "
        "address the author."
    ),
}

VERDICT_WORDING = {
    Verdict.REFUTED: "refuted: the evidence contradicts the post",
    Verdict.MISLEADING: "misleading: the post leaves out context readers need",
    Verdict.SUPPORTED: "supported: the evidence confirms the post",
}

MAX_EVIDENCE_IN_PROMPT = 4  # a reply cites one or two sources; the best four are plenty


class DraftAnswer(BaseModel):
    text: str


def evidence_blocks(evidence: Sequence[Evidence]) -> list[str]:
    """Evidence for the writer, already ordered by tier then relevance (facts listed first are
    used first)."""
    return [
        quote_untrusted(
            "evidence",
            e.quote,
            n=str(i),
            url=e.url,
            publisher=e.domain,
            tier=e.tier.value,
            stance=e.stance.value,
        )
        for i, e in enumerate(evidence[:MAX_EVIDENCE_IN_PROMPT], 1)
    ]


def draft_reply(
    *,
    post_block: str,
    verdict: Verdict,
    evidence: Sequence[Evidence],
    platform: Platform,
    lang: str | None,
    llm: LLMClient,
    ledger: CallLedger,
    feedback: str | None = None,
) -> str:
    answer = llm.structured(
        "write" if feedback is None else "rewrite",
        system=WRITE_SYSTEM,
        user=write_user(
            post_block,
            VERDICT_WORDING.get(verdict, verdict.value),
            evidence_blocks(evidence),
            PLATFORM_RULES[platform],
            lang,
            feedback,
        ),
        schema=DraftAnswer,
        ledger=ledger,
    )
    return answer.text.strip()
