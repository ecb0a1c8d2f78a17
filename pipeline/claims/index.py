"""Known claims: fact-checks already published (and our own approved answers), matched to posts.

Records come from the ClaimReview importers (`pipeline.claims.claimreview`) and from
`ClaimIndex.add_approved_answer`. Each is a claim as a fact-checker worded it, with the rating
they gave it, normalised to false / misleading / true / mixed / unrated (`normalise_rating`).

Matching (`ClaimIndex.match`) combines similarities of the post's claim with each stored
claim: the cosine of their MiniLM sentence embeddings, the BM25 score of the claim for the post
(`pipeline.claims.lexical`, over the best claim's), the cosine of their multilingual embeddings
(`pipeline.claims.multilingual`) and the overlap of their content words (Ochiai, on
`pipeline.relevance.lexical.terms`). Candidates are the best dense neighbours plus the best BM25
matches (and, for a post not in English, the multilingual model's nearest claims); each gets

    score = dense_weight × cosine + bm25_weight × BM25 share
            + multilingual_weight × multilingual cosine + the rest × overlap

(`fused_score`), or, for a fact-check in another language than the post, the multilingual
cosine alone, and such a match is at most weak. The best candidates (`SEGMENT_POOL`) are also
scored by their best pair of sentences when the post or claim has several
(`pipeline.claims.segments`, the polarity check seeing that pair), and with the review's title
(`pipeline.claims.review_titles`; strong only when the claim alone is at least weak); each
keeps its best score. Strength: strong (≥ `strong_threshold`: evidence without a human),
weak (≥ `weak_threshold`: a suggestion to moderators) or none, as Meedan Check does.
A strong score that negates, reverses, changes a number of or swaps a name in the claim, or
lacks its key predicate (`pipeline.claims.polarity.compare`) is demoted to weak, the reason in
`demoted`; `pipeline.claims.known` adds the LLM's confirmation and the cross-language search.
Ratings of publishers the table rates EXCLUDED are ignored, reviews dated after the as-of time are
not used, and a match whose review (else claim) date is older than `max_age_days`
(`time_bound_max_age_days` for a claim tied to a moment: `pipeline.claims.age`), or unknown, is
flagged `possibly_outdated`. Measured in bench/claim_checkthat.py and bench/claim_polarity.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from pipeline.claims.age import possibly_outdated
from pipeline.claims.lexical import ClaimBM25, top_rows
from pipeline.claims.multilingual import Neighbours, base_language, get_multilingual
from pipeline.claims.polarity.compare import ALL_KINDS, MismatchKind, compare
from pipeline.claims.ratings import Rating, rating_for_verdict
from pipeline.claims.records import ClaimIndexError as ClaimIndexError
from pipeline.claims.records import ClaimMatch as ClaimMatch
from pipeline.claims.records import ClaimRecord as ClaimRecord
from pipeline.claims.records import ClaimSource as ClaimSource
from pipeline.claims.records import MatchStrength as MatchStrength
from pipeline.claims.review_titles import TitleCache, with_title
from pipeline.claims.row_cache import RowFactsCache, Scored, TermStore
from pipeline.claims.rows import ClaimRows
from pipeline.claims.segments import ClaimSegmentCache, SegmentScorer, word_overlap
from pipeline.config import ClaimsConfig
from pipeline.indexes.store import StoredIndex
from pipeline.indexes.words import query_words
from pipeline.post.platform_text import strip_boilerplate
from pipeline.records import (
    Evidence,
    EvidenceSource,
    Stance,
    Verdict,
    utcnow,
)
from pipeline.relevance.lexical import clean_text, terms
from pipeline.relevance.scoring import Embedder
from pipeline.sources.credibility import PublisherTable
from pipeline.web.domains import registrable_domain
from pipeline.web.urls import canonical_url

CANDIDATE_POOL = 50  # dense and lexical candidates each, before exact scoring
SEGMENT_POOL = 10  # the best candidates also scored by sentence pairs (encoding is costly)


# --- matching ---------------------------------------------------------------------------------


def fused_score(
    minilm: float, multilingual: float, overlap: float, cfg: ClaimsConfig, bm25: float = 0.0
) -> float:
    """The match score: the two embedders' cosines, the BM25 share and the word overlap,
    weighted by `cfg` (the overlap gets what the others leave)."""
    rest = max(0.0, 1.0 - cfg.dense_weight - cfg.multilingual_weight - cfg.bm25_weight)
    return (
        cfg.dense_weight * minilm
        + cfg.multilingual_weight * multilingual
        + cfg.bm25_weight * bm25
        + rest * overlap
    )


def _cross_language(lang: str | None, claim_lang: str | None) -> bool:
    """Whether a post in `lang` meets a claim worded in another language. The claim's words
    decide, not the review's `languageCode`: a Spanish review often quotes the claim in
    English, and then MiniLM compares like with like. A guess too unsure to trust (short
    text, low probability) falls back to the record's language: an unknown language is not
    a different one (`pipeline.claims.row_cache`)."""
    return base_language(lang) != base_language(claim_lang)


def strength_of(score: float, cfg: ClaimsConfig) -> MatchStrength:
    if score >= cfg.strong_threshold:
        return MatchStrength.STRONG
    if score >= cfg.weak_threshold:
        return MatchStrength.WEAK
    return MatchStrength.NONE


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass
class _Matrix:
    version: tuple[int, int, str]  # writes here, the last row's id and key
    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    position: dict[int, int] = field(default_factory=dict)  # row id -> row of `vectors`
    lexical: ClaimBM25 | None = None  # built on first use, for this version of the claims


class ClaimIndex(StoredIndex):
    """Claim records kept in `rows` (`pipeline.claims.rows`) with their embeddings and the
    database's full-text index. Thread-safe."""

    kind = "claims"
    error = ClaimIndexError
    noun = "claim index"

    def __init__(
        self,
        rows: ClaimRows,
        embedder: Embedder,
        *,
        cfg: ClaimsConfig | None = None,
        publishers: PublisherTable | None = None,
    ) -> None:
        self._embedder = embedder
        self.cfg = cfg or ClaimsConfig()
        self._publishers = publishers or PublisherTable.default()
        self._lock = threading.RLock()
        self._matrix: _Matrix | None = None
        self._neighbours: Neighbours | None = None  # multilingual, built on first use
        self._segments = ClaimSegmentCache()
        self._titles = TitleCache()
        self._facts = RowFactsCache(self._publishers)
        self._terms = TermStore()
        self._writes = 0
        self._claims = rows
        self._open(rows, embedder.dim)

    # --- writing ------------------------------------------------------------------------------

    def add(self, records: Iterable[ClaimRecord]) -> int:
        """Store records (one per review of a claim); a record whose review URL and claim text
        are already stored replaces the stored one. Returns how many were new or changed."""
        batch = {r.key: r for r in records if r.claim_text.strip() and r.review_url.strip()}
        if not batch:
            return 0
        with self._lock, self._failing_as(f"cannot read the claim index in {self._where}"):
            stored = self._claims.stored_json(batch)
        changed = [r for k, r in batch.items() if stored.get(k) != r.model_dump_json()]
        if not changed:
            return 0
        vectors = self._embedder.encode([clean_text(r.claim_text) or r.claim_text for r in changed])
        rows = [
            (r.key, r.claim_text, r.model_dump_json(), vector.astype("<f4").tobytes())
            for r, vector in zip(changed, vectors, strict=True)
        ]
        with self._lock, self._failing_as(f"cannot store claims in {self._where}"):
            # A replaced record is stored anew: under a new id, or in SQLite under the last
            # row's freed id (`_dense_matrix` reads that row's key, so no stale row is kept).
            self._claims.replace(rows, self._embedder.dim)
            self._writes += 1
        return len(changed)

    def stored_json(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored record JSON of each of `keys` (`ClaimRecord.key`): a sync tells new
        reviews from updated and unchanged ones by it."""
        with self._lock, self._failing_as(f"cannot read the claim index in {self._where}"):
            return self._claims.stored_json(keys)

    def add_approved_answer(
        self,
        claim_text: str,
        verdict: Verdict,
        reply_url: str,
        *,
        evidence_url: str | None = None,
        date: datetime | None = None,
        language: str | None = None,
        publisher_name: str = "factnote",
    ) -> ClaimRecord:
        """Remember a reply of ours that a moderator approved, so the same claim seen again is
        a known claim. `evidence_url` is the source the reply cited (a new reply cites it)."""
        record = ClaimRecord(
            claim_text=" ".join(claim_text.split()),
            review_date=_utc(date) if date else utcnow(),
            rating_text=verdict.value,
            rating=rating_for_verdict(verdict),
            publisher_name=publisher_name,
            publisher_site=registrable_domain(reply_url) or "",
            review_url=reply_url,
            evidence_url=evidence_url,
            language=language,
            source=ClaimSource.APPROVED_ANSWER,
        )
        self.add([record])
        return record

    # --- reading ------------------------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock, self._failing_as(f"cannot read the claim index in {self._where}"):
            return self._claims.count()

    def _dense_matrix(self) -> _Matrix:
        with self._lock:
            # max(id) grows on every insert or replacement, also by another process, and reads
            # from the primary key alone; SQLite gives the id of a deleted last row to the next
            # insert, so the last row's key is read too.
            last = self._claims.last_row()
            version = (self._writes, last[0] if last else 0, last[1] if last else "")
            old = self._matrix
            if old is not None and old.version == version:
                return old
            appended = self._appended(old) if old is not None else None
            rows = appended if appended is not None else self._claims.embeddings()
        dim = self._embedder.dim
        vectors = (
            np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
            if rows
            else np.zeros((0, dim), dtype=np.float32)
        )
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        if appended is not None and old is not None:  # an import added rows, deleted none
            ids, vectors = np.concatenate([old.ids, ids]), np.concatenate([old.vectors, vectors])
        matrix = _Matrix(version, ids, vectors, {int(i): n for n, i in enumerate(ids)})
        with self._lock:
            self._matrix = matrix
        return matrix

    def _appended(self, old: _Matrix) -> list[tuple[int, bytes]] | None:
        """The rows stored after those `old` holds, when none of those was deleted or
        replaced since (their last row is still there with its key, and the count adds up):
        a 200,000-claim matrix then takes its new rows instead of a reload of seconds."""
        if not len(old.ids) or old.version[2] != self._claims.key_of(int(old.ids[-1])):
            return None
        count = self._claims.count()
        rows = self._claims.embeddings(after=int(old.ids[-1]))
        return rows if len(old.ids) + len(rows) == count else None

    def _lexical(self, matrix: _Matrix) -> ClaimBM25:
        """The BM25 index of the claims `matrix` holds, in its row order."""
        with self._lock:
            if matrix.lexical is None:
                texts = self._claims.texts()
                rows = [(int(i), texts.get(int(i), "")) for i in matrix.ids]
                matrix.lexical = ClaimBM25([], corpus=self._terms.corpus(rows))
            return matrix.lexical

    def _candidates(
        self, text: str, vector: npt.NDArray[np.float32]
    ) -> tuple[dict[int, float], dict[int, float]]:
        """Candidate ids with their cosine and their BM25 share: the nearest neighbours plus
        the best lexical matches (BM25 with a weight, else the database's full-text index)."""
        matrix = self._dense_matrix()
        cosines: dict[int, float] = {}
        if not len(matrix.ids):
            return cosines, {}
        scores = matrix.vectors @ vector
        lexical_scores = (
            self._lexical(matrix).scores(clean_text(text)) if self.cfg.bm25_weight > 0 else None
        )
        pool = min(CANDIDATE_POOL, len(scores))
        rows = list(top_rows(scores, pool))
        if lexical_scores is not None:
            rows += [n for n in top_rows(lexical_scores, pool) if lexical_scores[n] > 0]
        else:
            with self._lock:
                found = self._claims.fulltext_ids(query_words(clean_text(text)), CANDIDATE_POOL)
            rows += [matrix.position[i] for i in found if i in matrix.position]
        for n in rows:
            cosines[int(matrix.ids[n])] = float(scores[n])
        bm25 = (
            {}
            if lexical_scores is None
            else {int(matrix.ids[n]): float(lexical_scores[n]) for n in rows}
        )
        return cosines, bm25

    def match(
        self,
        text: str,
        *,
        as_of: datetime | None = None,
        limit: int | None = None,
        min_score: float | None = None,
        lang: str | None = None,
    ) -> list[ClaimMatch]:
        """Stored claims matching `text`, best first: by default the strong and weak ones
        (`min_score` lowers the floor, e.g. 0 for a threshold sweep). Excluded publishers'
        ratings and reviews dated after `as_of` (default now) are left out. `lang`: the
        post's language; a record in another one is scored by the multilingual model alone
        and is at most weak (`_cross_language`). Platform boilerplate never reaches the
        polarity rules (`pipeline.post.platform_text`); the ranking reads the post less its links
        (a signature names whom a fact-check is about: stripping it cost 0.044 MAP@5)."""
        posted = text
        text = strip_boilerplate(text)
        if not text:
            return []
        when = _utc(as_of) if as_of else utcnow()
        floor = self.cfg.weak_threshold if min_score is None else min_score
        vector = self._embedder.encode([clean_text(posted) or text])[0]
        with self._failing_as(f"cannot read the claim index in {self._where}"):
            cosines, bm25 = self._candidates(posted, vector)
            if base_language(lang) != "en":
                self._add_multilingual_candidates(text, vector, cosines)
            if not cosines:
                return []
            with self._lock:
                rows = self._claims.records_json(list(cosines))
        query_terms = terms(text)
        records = {
            rowid: ClaimRecord.model_validate_json(payload) for rowid, payload in rows.items()
        }
        languages = {i: self._facts.language(i, record) for i, record in records.items()}
        multilingual = self._multilingual(text, records, languages, lang)
        segmented, scorer = self._segment_pool(text, records, cosines, bm25)
        scored: list[Scored] = []
        for rowid, record in records.items():
            if record.date is not None and _utc(record.date) > when:
                continue
            dense = max(0.0, min(1.0, cosines[rowid]))
            overlap = word_overlap(query_terms, self._terms.get(rowid, record.claim_text))
            cross = _cross_language(lang, languages[rowid]) and rowid in multilingual
            score = (
                multilingual[rowid]
                if cross
                else fused_score(
                    dense, multilingual.get(rowid, dense), overlap, self.cfg, bm25.get(rowid, 0.0)
                )
            )
            paired = not cross and scorer is not None and rowid in segmented
            pair = scorer.best_pair(text, record.claim_text) if paired and scorer else None
            pair = pair if pair is not None and pair.score > score else None
            score = pair.score if pair is not None else score
            # The best candidates may still rise above the floor by their review's title.
            if score >= floor or rowid in segmented:
                scored.append(Scored(rowid, record, score, dense, overlap, cross, pair))
        scored = [c for c in self._with_titles(text, scored, segmented) if c.score >= floor]
        # Ranked first, so that the publisher table and the polarity rules read only the
        # matches returned (a query has some 100 candidates).
        scored.sort(key=lambda c: (-round(c.score, 4), c.record.review_url))
        wanted = [c for c in scored if not self._facts.excluded(c.rowid, c.record)]
        return [
            self._as_match(c, text, posted, when, lang)
            for c in wanted[: limit or self.cfg.max_matches]
        ]

    def _as_match(
        self, c: Scored, text: str, posted: str, when: datetime, lang: str | None
    ) -> ClaimMatch:
        record = c.record
        age = (when - _utc(record.date)).days if record.date is not None else None
        checked = [(text, record.claim_text, ALL_KINDS)] if c.pair is None else c.pair.checked()
        by_claim = c.score if c.by_claim is None else c.by_claim
        if c.score >= self.cfg.strong_threshold and by_claim < self.cfg.weak_threshold:
            # A title confirms a match its claim supports; it never makes one on its own.
            strength = MatchStrength.WEAK
            demoted = [f"title only: the claim itself scores {by_claim:.3f}, under weak"]
        else:
            strength, demoted = self._strength(checked, record, c.score, cross=c.cross, lang=lang)
        return ClaimMatch(
            record=record,
            score=round(c.score, 4),
            dense=round(c.dense, 4),
            lexical=round(c.overlap, 4),
            title_cosine=None if c.title is None else round(c.title, 4),
            strength=strength,
            possibly_outdated=possibly_outdated(age, record.claim_text, self.cfg),
            age_days=age,
            query=posted,
            demoted=demoted,
        )

    def _segment_pool(
        self,
        text: str,
        records: dict[int, ClaimRecord],
        cosines: dict[int, float],
        bm25: dict[int, float],
    ) -> tuple[set[int], SegmentScorer | None]:
        """The `SEGMENT_POOL` best candidates by cosine and BM25, and their pair scorer."""
        w = (self.cfg.dense_weight, self.cfg.bm25_weight)
        best = sorted(records, key=lambda i: -w[0] * cosines[i] - w[1] * bm25.get(i, 0.0))
        pool = set(best[:SEGMENT_POOL])
        return pool, self._segment_scorer(text, {i: records[i] for i in pool})

    def _with_titles(self, text: str, scored: list[Scored], pool: set[int]) -> list[Scored]:
        """`scored`, each candidate of `pool` in the post's language also scored with its
        review's title (`pipeline.claims.review_titles`); unchanged with `title_weight` 0."""
        weight = self.cfg.title_weight
        titled = {c.rowid: c.record.review_title for c in scored if c.rowid in pool and not c.cross}
        if weight <= 0 or not titled:
            return scored
        cosines = self._titles.cosines(text, titled, self._embedder.encode)
        return [
            replace(
                c,
                score=with_title(c.score, cosines[c.rowid], weight),
                title=cosines[c.rowid],
                by_claim=c.score,
            )
            if c.rowid in cosines
            else c
            for c in scored
        ]

    def _segment_scorer(self, text: str, records: dict[int, ClaimRecord]) -> SegmentScorer | None:
        """With `segment_matching` on, a scorer of sentence pairs (`pipeline.claims.segments`)
        for `text` against `records` (their stored MiniLM vectors reused); a pair is used
        when it scores above the whole texts."""
        if not self.cfg.segment_matching:
            return None
        matrix = self._dense_matrix()
        stored = {r.claim_text: matrix.vectors[matrix.position[i]] for i, r in records.items()}
        # Loading the multilingual model costs seconds and 150 MB; at weight 0 nothing reads it.
        multilingual = get_multilingual() if self.cfg.multilingual_weight > 0 else None
        return self._segments.scorer(text, stored, self._embedder.encode, multilingual, self.cfg)

    def _add_multilingual_candidates(
        self, text: str, vector: npt.NDArray[np.float32], cosines: dict[int, float]
    ) -> None:
        """A post not in English: the multilingual model's nearest stored claims join the
        candidates (with their MiniLM cosine, as the others have)."""
        encoder = get_multilingual()
        if encoder is None:
            return
        matrix = self._dense_matrix()
        with self._lock:
            if self._neighbours is None:
                self._neighbours = Neighbours(encoder)
            neighbours = self._neighbours
        for rowid in neighbours.nearest(text, matrix.ids.tolist(), self._texts, CANDIDATE_POOL):
            if rowid not in cosines:
                cosines[rowid] = float(matrix.vectors[matrix.position[rowid]] @ vector)

    def records_by_id(self, ids: list[int]) -> dict[int, ClaimRecord]:
        """The stored records of row `ids` (those still stored)."""
        with self._lock, self._failing_as(f"cannot read the claim index in {self._where}"):
            rows = self._claims.records_json(ids)
        return {i: ClaimRecord.model_validate_json(p) for i, p in rows.items()}

    def _texts(self, ids: list[int]) -> dict[int, str]:
        with self._lock:
            rows = self._claims.texts(ids)
        return {i: clean_text(t) or t for i, t in rows.items()}

    def _strength(
        self,
        checked: list[tuple[str, str, frozenset[MismatchKind]]],
        record: ClaimRecord,
        score: float,
        *,
        cross: bool,
        lang: str | None,
    ) -> tuple[MatchStrength, list[str]]:
        """The match's strength and why a strong score was demoted: a polarity mismatch
        between the (post, claim) texts `checked` under the rules named (the whole texts,
        or also the sentences that scored: `pipeline.claims.segments`), or a fact-check in
        another language (no rule or measurement backs those without a human;
        `pipeline.claims.known` has the LLM translate the post instead)."""
        strength = strength_of(score, self.cfg)
        demoted: list[str] = []
        if strength is MatchStrength.STRONG and self.cfg.polarity_check:
            demoted = [
                f"polarity {m}"
                for post, claim, kinds in checked
                for m in dict.fromkeys(compare(post, claim, kinds=kinds))
            ]
        if strength is MatchStrength.STRONG and cross:
            demoted.append(
                f"cross-language: the post is in {lang!r}, the fact-check in "
                f"{record.language or 'an unknown language'!r}; a moderator confirms it"
            )
        return (MatchStrength.WEAK if demoted else strength), demoted

    def _multilingual(
        self,
        text: str,
        records: dict[int, ClaimRecord],
        languages: dict[int, str | None],
        lang: str | None,
    ) -> dict[int, float]:
        """The multilingual model's cosine of `text` with each candidate (with weight 0, only
        with those in another language); empty when none is wanted or its package is missing
        (the MiniLM cosine then stands in for it)."""
        if self.cfg.multilingual_weight <= 0:
            records = {i: r for i, r in records.items() if _cross_language(lang, languages[i])}
        encoder = get_multilingual() if records else None
        if encoder is None:
            return {}
        texts = [clean_text(r.claim_text) or r.claim_text for r in records.values()]
        cosines = encoder.cosines(clean_text(text) or text, texts)
        return dict(zip(records, cosines, strict=True))


# --- matches as evidence and as a templated reply -------------------------------------------

_ACTIONABLE = {Rating.FALSE: Stance.REFUTES, Rating.MISLEADING: Stance.CONTEXT}


def usable_as_evidence(match: ClaimMatch) -> bool:
    """A strong, recent match to a false or misleading rating: used without a human."""
    return (
        match.strength is MatchStrength.STRONG
        and not match.possibly_outdated
        and match.record.rating in _ACTIONABLE
    )


def match_confidence(score: float, strong_threshold: float, min_confidence: float) -> float:
    """Confidence of a verdict resting on a match: piecewise linear in the match score, with
    the strong threshold landing exactly on the guard's `min_confidence`. So a strong match
    clears the guard's confidence rule and a weaker one never does, whatever the thresholds:
    [0, strong) maps to [0, min_confidence) and [strong, 1] to [min_confidence, 1]."""
    score = max(0.0, min(1.0, score))
    if score >= strong_threshold:
        span = 1.0 - strong_threshold
        rise = (score - strong_threshold) / span if span > 0 else 1.0
        return round(min_confidence + (1.0 - min_confidence) * rise, 4)
    return round(min_confidence * score / strong_threshold, 4) if strong_threshold > 0 else 0.0


def cited_url(record: ClaimRecord) -> str:
    if record.source is ClaimSource.APPROVED_ANSWER and record.evidence_url:
        return record.evidence_url
    return record.review_url


def fact_check_evidence(
    match: ClaimMatch, publishers: PublisherTable, *, min_confidence: float, strong: float
) -> Evidence | None:
    """A usable match as evidence: the review URL, the publisher's tier, refutes (false) or
    context (misleading); None for any other match."""
    if not usable_as_evidence(match):
        return None
    record = match.record
    url = cited_url(record)
    rating = publishers.lookup(url)
    publisher = record.publisher_name or rating.domain
    verdict = record.rating_text or record.rating.value
    return Evidence(
        url=url,
        title=f"{publisher}: {record.claim_text}"[:300],
        domain=rating.domain,
        tier=rating.tier,
        stance=_ACTIONABLE[record.rating],
        confidence=match_confidence(match.score, strong, min_confidence),
        quote=f'{publisher} rated the claim "{record.claim_text}" as: {verdict}',
        relevance=match.score,
        published=record.review_date,
        source=EvidenceSource.FACT_CHECK,
    )


def verdict_for(match: ClaimMatch) -> Verdict:
    return Verdict.REFUTED if match.record.rating is Rating.FALSE else Verdict.MISLEADING


def same_url(a: str, b: str) -> bool:
    return canonical_url(a) == canonical_url(b)
