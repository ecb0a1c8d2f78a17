"""Evidence extraction: quotes from pages that refute the post, add context, or support it.

The LLM proposes quotes; code decides what is kept. Every quote must really be on the page
(normalised and fuzzy-tolerant, since models fix typos and whitespace), at most two per stance
per page survive, and the kept quote is the page's own wording, not the model's.

The pages of one tier that are ready together go to the model in one call, each in its own
numbered data block: the instructions, the post and its claims are then sent once per batch
instead of once per page (a third of an extraction call's prompt when it holds three best
passages). A quote is looked for on the page the model named first, then on the batch's other
pages, so a wrong page number costs nothing but a quote that is on no page is dropped.

Asked to (`writing_rules`), the extractor also drafts the reply when its quotes settle the post:
the model has just read the passages, and the check saves a whole LLM round trip when that
draft can stand in for the writer's (`pipeline.reply.writer.early_draft` decides).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from pipeline.config import LLMConfig
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.llm.prompts import (
    EVIDENCE_DRAFT_SYSTEM,
    EVIDENCE_SYSTEM,
    cut_text,
    evidence_user,
    page_block,
)
from pipeline.records import Document, EarlyDraft, Evidence, Passage, Stance, Tier, Verdict
from pipeline.reply.writer import evidence_key
from pipeline.research.passage_focus import Focus, focus_passage
from pipeline.web.urls import canonical_url

MAX_PER_STANCE = 2  # MUSE: ≤2 explicit refutations and ≤2 context passages per page
FUZZY_MIN = 90.0  # partial_ratio needed to accept a quote that is not an exact substring
MIN_QUOTE_CHARS = 20


class QuoteAnswer(BaseModel):
    page: int = 1  # the n of the page block the quote is from
    quote: str
    stance: Literal["refutes", "context", "supports"]
    confidence: float = Field(ge=0.0, le=1.0)


class ReplyDraft(BaseModel):
    verdict: Literal["refuted", "misleading", "supported"]
    text: str


class EvidenceAnswer(BaseModel):
    items: list[QuoteAnswer]
    draft: ReplyDraft | None = None  # only asked for with reply rules


@dataclass(frozen=True)
class PageInput:
    doc: Document
    tier: Tier
    domain: str
    relevance: float
    passages: list[Passage]
    round: int


@dataclass
class Extraction:
    evidence: list[Evidence]
    rejected: list[str]  # quotes dropped, with why (for the trace)
    unfound: int = 0  # quotes on none of the call's pages


@dataclass
class BatchExtraction:
    pages: list[Extraction]  # one per page, in the order given
    draft: EarlyDraft | None = None


_QUOTE_CHARS = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "–": "-", "—": "-"})
_SPACE_RE = re.compile(r"\s+")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTE_CHARS).lower()
    return _SPACE_RE.sub(" ", text).strip()


def locate_quote(quote: str, page_text: str) -> str | None:
    """The page's own text for `quote`, or None if the quote is not really on the page."""
    q = normalise(quote).strip(" .\"'")
    if len(q) < MIN_QUOTE_CHARS:
        return None
    page = normalise(page_text)
    start = page.find(q)
    if start >= 0:
        return _span_in_original(page_text, page, start, start + len(q))
    alignment = fuzz.partial_ratio_alignment(q, page, score_cutoff=FUZZY_MIN)
    if alignment is None:
        return None
    # Guard against short fuzzy matches inside a long quote: the matched span must cover the
    # quote nearly entirely.
    span = alignment.dest_end - alignment.dest_start
    if span < 0.9 * len(q):
        return None
    return _span_in_original(page_text, page, alignment.dest_start, alignment.dest_end)


def _span_in_original(original: str, normalised: str, start: int, end: int) -> str:
    """Map a span of the normalised text back to readable page text.

    Normalisation only collapses whitespace and maps characters one-to-one (NFKC aside), so the
    normalised span's words are found again in the original by a whitespace-tolerant search.
    """
    words = normalised[start:end].split(" ")
    pattern = r"\s+".join(re.escape(w) for w in words if w)
    folded = unicodedata.normalize("NFKC", original).translate(_QUOTE_CHARS)
    match = re.search(pattern, folded, flags=re.IGNORECASE)
    if match:
        return _SPACE_RE.sub(" ", match.group(0)).strip()
    return normalised[start:end]


def extract_evidence(
    pages: Sequence[PageInput],
    post_block: str,
    claims: list[str],
    llm: LLMClient,
    ledger: CallLedger,
    *,
    writing_rules: str | None = None,
    known: Sequence[Evidence] = (),
    max_passage_chars: int = LLMConfig().max_post_chars,
    focus: Focus = Focus(),
) -> BatchExtraction:
    """One extraction call for `pages`; one `Extraction` per page, in the same order. With
    `writing_rules` (the platform's budget and the language), the call may also draft the reply,
    from its own quotes and the evidence `known` so far (shown to it for that purpose only).
    Each passage is cut to `max_passage_chars`: a passage is about 120 words, but a page's
    "word" can be any length. With `focus` words, a passage's sentences that share none of
    them are left out (`pipeline.research.passage_focus.focus_passage`).
    """
    if not pages:
        return BatchExtraction(pages=[])
    blocks = [
        page_block(
            number,
            page.doc.final_url or page.doc.url,
            page.doc.title,
            "\n\n".join(
                focus_passage(cut_text(p.text, max_passage_chars), focus) for p in page.passages
            ),
        )
        for number, page in enumerate(pages, 1)
    ]
    answer = llm.structured(
        "evidence",
        system=EVIDENCE_DRAFT_SYSTEM if writing_rules else EVIDENCE_SYSTEM,
        user=evidence_user(
            post_block, claims, "\n\n".join(blocks), writing_rules, known if writing_rules else ()
        ),
        schema=EvidenceAnswer,
        ledger=ledger,
    )
    extractions = verify_batch(answer.items, pages)
    draft = None
    if writing_rules and answer.draft is not None and answer.draft.text.strip():
        draft = EarlyDraft(
            verdict=Verdict(answer.draft.verdict),
            text=answer.draft.text.strip(),
            page_urls=[canonical_url(p.doc.final_url or p.doc.url) for p in pages],
            complete=not any(e.unfound for e in extractions),
            known=[evidence_key(item) for item in known],
        )
    return BatchExtraction(pages=extractions, draft=draft)


def verify_batch(items: list[QuoteAnswer], pages: Sequence[PageInput]) -> list[Extraction]:
    """Keep the quotes that are really on one of `pages`, attributed to the page that holds
    them, at most `MAX_PER_STANCE` per stance per page."""
    results = [Extraction(evidence=[], rejected=[]) for _ in pages]
    per_stance: list[dict[str, int]] = [{} for _ in pages]
    seen: list[set[str]] = [set() for _ in pages]
    # Most confident first, so the per-stance cap keeps the strongest quotes.
    for item in sorted(items, key=lambda i: -i.confidence):
        named = item.page - 1 if 0 < item.page <= len(pages) else 0
        order = [named, *(i for i in range(len(pages)) if i != named)]
        found = next(
            (
                (i, located)
                for i in order
                if (located := locate_quote(item.quote, pages[i].doc.text)) is not None
            ),
            None,
        )
        if found is None:
            results[named].rejected.append(f"not on page: {item.quote[:120]!r}")
            results[named].unfound += 1
            continue
        index, located = found
        page = pages[index]
        key = normalise(located)
        if key in seen[index]:
            continue
        if per_stance[index].get(item.stance, 0) >= MAX_PER_STANCE:
            results[index].rejected.append(
                f"over the {MAX_PER_STANCE}-per-stance cap: {item.quote[:80]!r}"
            )
            continue
        seen[index].add(key)
        per_stance[index][item.stance] = per_stance[index].get(item.stance, 0) + 1
        results[index].evidence.append(
            Evidence(
                url=page.doc.final_url or page.doc.url,
                title=page.doc.title,
                domain=page.domain,
                tier=page.tier,
                stance=Stance(item.stance),
                confidence=item.confidence,
                quote=located,
                relevance=page.relevance,
                published=page.doc.published,
                content_hash=page.doc.content_hash,
                round=page.round,
            )
        )
    return results
