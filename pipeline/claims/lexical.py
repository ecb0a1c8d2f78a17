"""BM25 over the stored claims: the lexical half of claim matching.

On real tweets against 14,231 Snopes fact-checks (CLEF CheckThat! 2022 Task 2A, 5 folds of the
train tweets, bench/claim_matching_eval.py) BM25 alone ranks worse than the MiniLM cosine
(MAP@5 0.751 against 0.825) but finds what the embedding misses (the name of the person a post
quotes, a rare word): 0.8 × cosine + 0.2 × BM25 scored 0.876, a fold gain of 0.051 ± 0.012
over the cosine alone. The content-word overlap the index used before is kept for sentence
pairs (`pipeline.claims.segments`), where there is no collection to weigh words by.

The index is `bm25s` (k1 1.5, b 0.75, its defaults) over `pipeline.relevance.lexical.terms` of each
claim text, built in memory when the stored claims change, like the dense matrix beside it, so
SQLite and PostgreSQL deployments rank alike. A query's scores are divided by the best score in the
collection, so the best lexical match weighs 1 and the fused score stays in [0, 1].
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.relevance.lexical import terms


class ClaimBM25:
    """BM25 scores of a query against claim texts, in the order given."""

    def __init__(
        self, texts: Sequence[str], *, corpus: Sequence[Sequence[str]] | None = None
    ) -> None:
        """`corpus`: the texts' `terms` when already known (`pipeline.claims.row_cache.TermStore`),
        in place of `texts`."""
        # bm25s (and scipy under it) cost a fifth of a second to import: only when used.
        import bm25s

        # bm25s sets its own logger to DEBUG at import, which floods every command's output.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        corpus = [terms(t) for t in texts] if corpus is None else [list(c) for c in corpus]
        self.size = len(corpus)
        self._index: Any = None
        if any(corpus):
            self._index = bm25s.BM25()
            self._index.index(corpus, show_progress=False)

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """Each claim's BM25 score for `query` over the best one (all 0 when no word of the
        query is in any claim)."""
        found = np.zeros(self.size, dtype=np.float32)
        if self._index is None:
            return found
        words = [w for w in terms(query) if w in self._index.vocab_dict]
        if not words:
            return found
        found = np.asarray(self._index.get_scores(words), dtype=np.float32)
        best = float(found.max()) if found.size else 0.0
        return found / best if best > 0 else found


def top_rows(scores: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.intp]:
    """Rows of the `count` highest scores, best first (ties by row)."""
    if count >= len(scores):
        return np.argsort(-scores, kind="stable")
    top = np.argpartition(-scores, count - 1)[:count]
    return top[np.lexsort((top, -scores[top]))]
