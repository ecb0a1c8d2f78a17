"""Lexical pre-filtering: which of a page's passages are worth running the embedding model on.

The embedding model is most of the pipeline's own compute (about 55 ms a 120-word passage on
one CPU core), and a news page splits into about twenty passages of which the extractor is
shown three (`RelevanceConfig.passages_per_page`). Passages that share no content word with the
post or the search query that found the page are rarely the ones the model ranks first, so
only the `RelevanceConfig.prefilter_passages` passages with the highest BM25 score against those
words are encoded; the model then ranks those against the claims as before.

BM25 (`bm25s`, k1 1.2, b 0.75, as `pipeline.authority.retrieval`) is computed within the page: its
passages are the corpus, so a word the whole page repeats (the topic) weighs less than a word
only some passages carry (the claim's specifics). Ties, including a page that shares no word
with the post (another language, a paraphrase), keep page order, so the lead comes first.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from pipeline.relevance.lexical import terms

# A token `terms` never produces: bm25s needs every document to have at least one.
_EMPTY_DOC_TERM = "\x00"
BM25_K1 = 1.2
BM25_B = 0.75


def bm25_scores(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """BM25 score of each tokenised document against the query terms (0.0 for no overlap)."""
    if not documents:
        return []
    if not query:
        return [0.0] * len(documents)
    # bm25s (and scipy under it) take half a second to import: only pages pay for it.
    import bm25s

    # bm25s sets its own logger to DEBUG at import, which floods every command's output.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    model = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    model.index([list(d) or [_EMPTY_DOC_TERM] for d in documents], show_progress=False)
    return [float(s) for s in np.asarray(model.get_scores(list(query)), dtype=np.float64)]


def focus_terms(texts: Sequence[str]) -> list[str]:
    """The distinct content-word stems of `texts`, in first-seen order."""
    return list(dict.fromkeys(t for text in texts for t in terms(text)))


def lexical_order(passages: Sequence[str], focus: Sequence[str]) -> list[int]:
    """Positions of `passages`, best BM25 score against the words of `focus` first (ties in
    page order)."""
    scores = bm25_scores([terms(p) for p in passages], focus_terms(focus))
    return sorted(range(len(passages)), key=lambda i: (-scores[i], i))


def candidate_passages(passages: Sequence[str], focus: Sequence[str], keep: int) -> list[int]:
    """Positions (in page order) of the `keep` passages scoring highest by BM25 against the
    words of `focus`; every position when `keep` is 0 or the page has no more than `keep`."""
    if keep <= 0 or len(passages) <= keep:
        return list(range(len(passages)))
    return sorted(lexical_order(passages, focus)[:keep])
