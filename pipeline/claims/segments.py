"""Segment-level claim matching: a long text scored by its best sentence.

A long post usually contains the checked claim as one of its sentences, and a long rumour
indexed as a fact-checked claim holds the part a paraphrase restates in one sentence; the
whole text's embedding is diluted by the rest. `segments` splits a text into sentences (a
rule: no maintained sentence splitter ships with the project; `pipeline.relevance.scoring` splits
passages the same way), and `SegmentScorer.best_pair` scores every segment of the post
against every segment of the claim with the same fused score as whole texts
(`pipeline.claims.index.fused_score`), keeping the best pair. The polarity rules then see that
pair and the whole texts (`SegmentPair.checked`): a post that negates the claim's first
sentence and repeats its second stays weak, and so does one that opens "It is not true that".
A claim's runs of two and three consecutive sentences (`windows`) are segments too: a post
often sums up in one sentence what a rumour tells in several ("visited the hospital, met
only his party officials and never met a doctor" against three sentences that say so), and
the polarity rules then see every sentence the summary draws on (a "did not" in the third
one cancels the post's "never"). Only the claim's side gets them: stored claims' vectors are cached
(`ClaimSegmentCache`), a post's would cost a forward pass per query.

Measured in `bench/claim_polarity.py` ("segments_*", through `bench.claim_segments`): on by
default (`ClaimsConfig.segment_matching`; the figures are beside it).
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.claims.multilingual import MultilingualEncoder
from pipeline.claims.polarity.compare import ALL_KINDS, MismatchKind
from pipeline.config import ClaimsConfig
from pipeline.relevance.lexical import clean_text, terms

# A sentence ends with . ! ? … : or ; (closing quotes, brackets and markdown stars may follow)
# and a space; a line break ends one too. The colon counts: rumours often read
# "Source: what happened".
_SEGMENT_END = re.compile(r"(?<=[.!?…:;])[\"'”’)\]*]*\s+|\n+")
MIN_WORDS = 4  # a shorter piece ("Urgent!", "Egypt Sisi") says no claim of its own
MAX_SEGMENTS = 12  # a very long post is scored on its first sentences only
WINDOW_SIZES = (2, 3)  # consecutive sentences of a claim scored together (`windows`)

Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]
Overlap = Callable[[str, str], float]


def segments(text: str) -> list[str]:
    """The sentences of `text` that can carry a claim (at least `MIN_WORDS` words); empty
    when there are fewer than two, since the whole text is then its only segment."""
    pieces = [p.strip() for p in _SEGMENT_END.split(text) if p and p.strip()]
    found = [p for p in pieces if len(p.split()) >= MIN_WORDS][:MAX_SEGMENTS]
    return found if len(found) > 1 else []


def windows(text: str) -> list[str]:
    """The runs of two and three consecutive segments of `text` (`WINDOW_SIZES`), each
    shorter than the whole text."""
    parts = segments(text)
    return [
        " ".join(parts[start : start + size])
        for size in WINDOW_SIZES
        if size < len(parts)
        for start in range(len(parts) - size + 1)
    ]


def claim_parts(text: str) -> list[str]:
    """What a claim is scored by besides its whole text: its segments and their windows."""
    return [*segments(text), *windows(text)]


def word_overlap(a: Sequence[str], b: Sequence[str]) -> float:
    """Ochiai coefficient of two term sets: 1 for the same words, 0 for none shared."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / math.sqrt(len(sa) * len(sb))


@dataclass(frozen=True)
class SegmentPair:
    score: float
    post: str  # the post's segment (or the whole post)
    claim: str  # the claim's segment (or the whole claim)
    whole_post: str
    whole_claim: str

    def checked(self) -> list[tuple[str, str, frozenset[MismatchKind]]]:
        """The (post, claim) texts the polarity rules compare, and which rules: every rule on
        the pair that scored, and on the whole texts as well when the pair holds only part of
        the claim (a post may repeat one sentence of a claim and deny another). Otherwise
        the whole texts meet the negation rule, which looks only at cues denying words of
        the claim ("It is not true that …: X"), and the dispute rule ("Fake news again. X");
        a month or a name in a post's other sentences changes nothing it says about the
        claim."""
        whole = (
            ALL_KINDS
            if self.claim != self.whole_claim
            else frozenset({MismatchKind.NEGATION, MismatchKind.DISPUTE})
        )
        return [(self.post, self.claim, ALL_KINDS), (self.whole_post, self.whole_claim, whole)]


@dataclass(frozen=True)
class SegmentScorer:
    """The fused score's parts for segment pairs: the MiniLM and multilingual encoders (the
    latter None when its package is missing: MiniLM stands in for it, as for whole texts) and
    the word overlap of two texts."""

    minilm: Encode
    multilingual: Encode | None
    overlap: Overlap
    weights: tuple[float, float]  # MiniLM and multilingual weight; the overlap gets the rest

    @classmethod
    def build(
        cls,
        minilm: Encode,
        multilingual: MultilingualEncoder | None,
        cfg: ClaimsConfig,
        *,
        known: Mapping[str, npt.NDArray[np.float32]] | None = None,
    ) -> SegmentScorer:
        """The scorer `ClaimIndex` uses for one query: texts cleaned as for whole-text
        matching, each text's vectors computed once (the post meets every candidate);
        `known`: MiniLM vectors the index already holds (its claims')."""
        multi = multilingual if multilingual is not None and cfg.multilingual_weight else None
        return cls(
            minilm=_Memo(minilm, known),
            multilingual=None if multi is None else _Memo(multi.encode),
            overlap=lambda a, b: word_overlap(_terms(a), _terms(b)),
            weights=(cfg.dense_weight, cfg.multilingual_weight),
        )

    def prepare(self, post: str, claims: Sequence[str]) -> None:
        """Encode every text `best_pair` will need for `post` and `claims` in one batch per
        model (one forward pass per candidate would take many times longer)."""
        post_parts = segments(post)
        texts = [post, *post_parts]
        for claim in claims:
            parts = claim_parts(claim)
            if post_parts or parts:
                texts += [claim, *parts]
        if len(texts) == 1:
            return  # one sentence each side: `best_pair` reads no vector, so none is computed
        self.minilm(texts)
        if self.multilingual is not None:
            self.multilingual(texts)

    def best_pair(self, post: str, claim: str) -> SegmentPair | None:
        """The best-scoring pair of the post's and the claim's segments (each side's whole
        text counts as a segment too, and so do the claim's `windows`); None when neither
        text has more than one segment."""
        post_parts, parts = segments(post), claim_parts(claim)
        if not post_parts and not parts:
            return None
        left = [post, *post_parts]
        right = [claim, *parts]
        a, b = self.minilm(left), self.minilm(right)
        dense = np.clip(a @ b.T, 0.0, 1.0)
        multi = dense
        if self.multilingual is not None:
            multi = np.clip(self.multilingual(left) @ self.multilingual(right).T, 0.0, 1.0)
        lexical = np.array([[self.overlap(x, y) for y in right] for x in left])
        w_dense, w_multi = self.weights
        fused = w_dense * dense + w_multi * multi + max(0.0, 1.0 - w_dense - w_multi) * lexical
        i, j = np.unravel_index(int(fused.argmax()), fused.shape)
        return SegmentPair(float(fused[i, j]), left[i], right[j], post, claim)


@functools.lru_cache(maxsize=4096)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(terms(text))


class _Memo:
    """`encode` on cleaned texts, remembering each text's vector."""

    def __init__(
        self, encode: Encode, known: Mapping[str, npt.NDArray[np.float32]] | None = None
    ) -> None:
        self._encode = encode
        self._seen = dict(known or {})

    @property
    def vectors(self) -> dict[str, npt.NDArray[np.float32]]:
        return self._seen

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        todo = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if todo:
            vectors = self._encode([clean_text(t) or t for t in todo])
            self._seen.update(zip(todo, vectors, strict=True))
        return np.stack([self._seen[t] for t in texts]).astype(np.float32, copy=False)


class ClaimSegmentCache:
    """MiniLM vectors of stored claims' segments, kept between queries (a long claim meets
    many posts; encoding its sentences anew each time would cost a forward pass per query).
    Bounded, oldest first out. Thread-safe."""

    def __init__(self, size: int = 20_000) -> None:
        self._size = size
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    def scorer(
        self,
        post: str,
        claims: Mapping[str, npt.NDArray[np.float32]],
        minilm: Encode,
        multilingual: MultilingualEncoder | None,
        cfg: ClaimsConfig,
    ) -> SegmentScorer:
        """A scorer for `post` against `claims` (each claim text with its stored MiniLM
        vector), every vector it needs already computed."""
        with self._lock:
            known = {**self._vectors, **claims}
        scorer = SegmentScorer.build(minilm, multilingual, cfg, known=known)
        scorer.prepare(post, list(claims))
        if isinstance(scorer.minilm, _Memo):
            seen = scorer.minilm.vectors
            parts = {p: seen[p] for c in claims for p in claim_parts(c) if p in seen}
            with self._lock:
                self._vectors.update(parts)
                for text in list(self._vectors)[: max(0, len(self._vectors) - self._size)]:
                    del self._vectors[text]
        return scorer
