"""What of a chosen passage the extractor reads: the sentences that can bear on the claims.

A passage is about 120 words chosen by the relevance model as a whole; news pages interleave
the sentences that speak to a claim with quotes from bystanders, schedules, donation appeals
and audio notices, all sent to the LLM at a price per token. `focus_passage` keeps a
sentence when it shares a content word (`pipeline.relevance.lexical.terms`: stemmed, stopwords out)
with the claims, and the sentence right after a kept one, because a page often states a claim
in one sentence and rules on it in the next ("Social media posts say X. This is false.").
Each run of dropped sentences becomes one "[…]", so the model knows the text is an excerpt.
A passage in another language than the claims is shown whole: only names would match there.
Quotes are still checked against the whole page
(`pipeline.research.evidence_extraction.locate_quote`): nothing the extractor may quote is lost by
what it is not shown, only what it could have read.

What it saves and costs is measured in `bench/pipeline_cost.py` (prompt tokens, decisions
compared) and `bench/passage_focus.py` (how much of real evidence it keeps).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pipeline.claims.multilingual import text_language
from pipeline.relevance import scoring as relevance
from pipeline.relevance.lexical import terms

ELIDED = "[…]"


@dataclass(frozen=True)
class Focus:
    """What a passage is focused on: the content-word stems a kept sentence must share with
    the claims, and the claims' language (None: too short to tell)."""

    words: frozenset[str] = frozenset()
    language: str | None = None

    @classmethod
    def of(cls, claims: Iterable[str]) -> Focus:
        texts = [claim for claim in claims if claim.strip()]
        words = frozenset(t for text in texts for t in terms(text))
        return cls(words, text_language(" ".join(texts)))

    def reads(self, text: str) -> bool:
        """Whether `text` is in the claims' language (or either is too short to tell)."""
        other = text_language(text)
        return self.language is None or other is None or other == self.language


def sentences(text: str) -> list[str]:
    """`text` cut into sentences (as passages are packed, `pipeline.relevance.scoring.sentences`)
    and at every line break (a heading, a list item), in order, without empty pieces."""
    return [part for line in text.splitlines() for part in relevance.sentences(line)]


def kept_sentences(
    parts: Sequence[str], focus: frozenset[str], *, after: bool = True
) -> list[bool]:
    """Which of a passage's sentences the extractor is shown: those sharing a word with
    `focus` and (with `after`) each one right after such a sentence; every one when `focus`
    is empty, the passage is one sentence, or no sentence shares a word (the relevance model
    chose it for a reason words alone do not show: a paraphrase, another language)."""
    hits = [not focus.isdisjoint(terms(part)) for part in parts]
    if not focus or len(parts) < 2 or not any(hits):
        return [True] * len(parts)
    return [hit or (after and i > 0 and hits[i - 1]) for i, hit in enumerate(hits)]


def focus_passage(text: str, focus: Focus) -> str:
    """`text` with the sentences `kept_sentences` does not show replaced by one `ELIDED`
    mark a run; `text` itself when every sentence is shown or it is in another language than
    the claims."""
    if not focus.words:
        return text
    parts = sentences(text)
    keep = kept_sentences(parts, focus.words)
    if all(keep) or not focus.reads(text):
        return text
    out: list[str] = []
    for part, kept in zip(parts, keep, strict=True):
        if kept:
            out.append(part)
        elif not out or out[-1] != ELIDED:
            out.append(ELIDED)
    return " ".join(out)
