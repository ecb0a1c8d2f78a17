"""Known claims: fact-checks already published (and our own approved answers), matched to posts.

Records come from the ClaimReview importers (`pipeline.claimreview`) and from
`ClaimIndex.add_approved_answer`. Each is a claim as a fact-checker worded it, with the rating
they gave it, normalised to false / misleading / true / mixed / unrated (`normalise_rating`).

Matching (`ClaimIndex.match`) combines two similarities of the post's claim with each stored
claim: the cosine of their sentence embeddings and the overlap of their content words (Ochiai:
shared terms / √(|terms₁|·|terms₂|), on `pipeline.lexical.terms`). Candidates are the best
dense neighbours plus the best FTS5 matches; each gets

    score = dense_weight × cosine + (1 − dense_weight) × overlap

and a strength: strong (≥ `strong_threshold`: used as evidence automatically), weak
(≥ `weak_threshold`: shown to moderators) or none, two thresholds as Meedan Check uses them.
A match that scores strong but negates, reverses, changes a number of or swaps a name in the
fact-checked claim (`pipeline.polarity`) is demoted to weak, the reason kept in `demoted`;
`pipeline.known_claims` adds the LLM's confirmation and the cross-language search.
The defaults were set on hand-written paraphrases of the Task 5 dev rumors
(`bench/claim_matching_eval.py`, which explains how). Ratings whose review URL belongs to a
publisher the table rates EXCLUDED are ignored, reviews dated after the as-of time are not
used (they did not exist yet), and a match whose review (else claim) date is older than
`max_age_days`, or unknown, is flagged `possibly_outdated`.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
import threading
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from pipeline.config import ClaimsConfig, GuardConfig
from pipeline.credibility import PublisherTable
from pipeline.domains import registrable_domain
from pipeline.failures import PipelineFailure
from pipeline.formats import reply_format
from pipeline.lexical import clean_text, terms
from pipeline.polarity import compare
from pipeline.ratings import Rating, rating_for_verdict
from pipeline.records import (
    Evidence,
    EvidenceSource,
    Platform,
    Stance,
    Tier,
    Verdict,
    utcnow,
)
from pipeline.relevance import Embedder
from pipeline.search.local_index import fts_query
from pipeline.sqlite_store import open_store
from pipeline.urls import canonical_url

SCHEMA_VERSION = "1"
CANDIDATE_POOL = 50  # dense and lexical candidates each, before exact scoring

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS claims (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,       -- review URL + claim text: one record per review of a claim
    record_json TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS claims_fts USING fts5(
    claim_text, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


class ClaimIndexError(PipelineFailure, RuntimeError):
    """The claim store cannot be used (unreadable file, other embedding size)."""

    stage = "known_claims"


class ClaimSource(StrEnum):
    CLAIMREVIEW = "claimreview"  # schema.org ClaimReview JSON-LD from a publisher's page
    FACTCHECK_API = "factcheck_api"  # Google Fact Check Tools claims:search JSON
    APPROVED_ANSWER = "approved_answer"  # a reply of ours that a moderator approved


class MatchStrength(StrEnum):
    STRONG = "strong"
    WEAK = "weak"
    NONE = "none"


class ClaimRecord(BaseModel):
    claim_text: str
    claimant: str = ""
    claim_date: datetime | None = None
    review_date: datetime | None = None
    rating_text: str = ""
    rating: Rating = Rating.UNRATED
    publisher_name: str = ""
    publisher_site: str = ""  # the publisher's domain
    review_url: str
    # Approved answers: the evidence page the reply cited (what a new reply should cite).
    evidence_url: str | None = None
    language: str | None = None
    source: ClaimSource = ClaimSource.CLAIMREVIEW

    @property
    def key(self) -> str:
        text = " ".join(self.claim_text.split()).casefold()
        return hashlib.sha256(f"{canonical_url(self.review_url)}\n{text}".encode()).hexdigest()

    @property
    def date(self) -> datetime | None:
        """The date a match is judged by: the review's, else the claim's."""
        return self.review_date or self.claim_date


class ClaimMatch(BaseModel):
    record: ClaimRecord
    score: float  # combined, in [0, 1]
    dense: float  # cosine
    lexical: float  # content-word overlap
    strength: MatchStrength
    possibly_outdated: bool
    age_days: int | None = None
    query: str = ""  # the text matched (a claim of the post, or the post itself)
    # Why a match that scored strong is not: a polarity mismatch (`pipeline.polarity`), an
    # LLM that judged the claims opposite or different. Shown to moderators.
    demoted: list[str] = []


# --- matching ---------------------------------------------------------------------------------


def word_overlap(a: Sequence[str], b: Sequence[str]) -> float:
    """Ochiai coefficient of two term sets: 1 for the same words, 0 for none shared."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / math.sqrt(len(sa) * len(sb))


def strength_of(score: float, cfg: ClaimsConfig) -> MatchStrength:
    if score >= cfg.strong_threshold:
        return MatchStrength.STRONG
    if score >= cfg.weak_threshold:
        return MatchStrength.WEAK
    return MatchStrength.NONE


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class _Matrix:
    version: tuple[int, int, int]
    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


class ClaimIndex:
    """Claim records in one SQLite file with embeddings and an FTS5 index. Thread-safe."""

    def __init__(
        self,
        path: str | Path,
        embedder: Embedder,
        *,
        cfg: ClaimsConfig | None = None,
        publishers: PublisherTable | None = None,
    ) -> None:
        self._embedder = embedder
        self.cfg = cfg or ClaimsConfig()
        self._publishers = publishers or PublisherTable.default()
        self._path = str(path)
        self._lock = threading.RLock()
        self._matrix: _Matrix | None = None
        self._writes = 0
        self._conn = open_store(
            self._path,
            schema_sql=_SCHEMA,
            schema_version=SCHEMA_VERSION,
            embedding_dim=self._embedder.dim,
            error=ClaimIndexError,
            label="claim index",
        )

    # --- writing ------------------------------------------------------------------------------

    def add(self, records: Iterable[ClaimRecord]) -> int:
        """Store records (one per review of a claim); a record whose review URL and claim text
        are already stored replaces the stored one. Returns how many were new or changed."""
        batch = {r.key: r for r in records if r.claim_text.strip() and r.review_url.strip()}
        if not batch:
            return 0
        with self._lock:
            marks = ",".join("?" * len(batch))
            stored = dict(
                self._conn.execute(
                    f"SELECT key, record_json FROM claims WHERE key IN ({marks})",  # noqa: S608
                    list(batch),
                ).fetchall()
            )
        changed = [r for k, r in batch.items() if stored.get(k) != r.model_dump_json()]
        if not changed:
            return 0
        vectors = self._embedder.encode([clean_text(r.claim_text) or r.claim_text for r in changed])
        try:
            with self._lock, self._conn:
                for record, vector in zip(changed, vectors, strict=True):
                    old = self._conn.execute(
                        "SELECT id FROM claims WHERE key = ?", (record.key,)
                    ).fetchone()
                    if old is not None:
                        self._conn.execute("DELETE FROM claims_fts WHERE rowid = ?", (old[0],))
                        self._conn.execute("DELETE FROM claims WHERE id = ?", (old[0],))
                    cursor = self._conn.execute(
                        "INSERT INTO claims (key, record_json, embedding) VALUES (?, ?, ?)",
                        (record.key, record.model_dump_json(), vector.astype("<f4").tobytes()),
                    )
                    self._conn.execute(
                        "INSERT INTO claims_fts (rowid, claim_text) VALUES (?, ?)",
                        (cursor.lastrowid, record.claim_text),
                    )
                self._writes += 1
        except sqlite3.Error as exc:
            raise ClaimIndexError(f"cannot store claims in {self._path}: {exc}") from exc
        return len(changed)

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
        with self._lock:
            (count,) = self._conn.execute("SELECT count(*) FROM claims").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ClaimIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _dense_matrix(self) -> _Matrix:
        with self._lock:
            top, count = self._conn.execute(
                "SELECT coalesce(max(id), 0), count(*) FROM claims"
            ).fetchone()
            version = (self._writes, int(top), int(count))
            if self._matrix is not None and self._matrix.version == version:
                return self._matrix
            rows = self._conn.execute("SELECT id, embedding FROM claims ORDER BY id").fetchall()
        dim = self._embedder.dim
        vectors = (
            np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
            if rows
            else np.zeros((0, dim), dtype=np.float32)
        )
        matrix = _Matrix(version, np.array([r[0] for r in rows], dtype=np.int64), vectors)
        with self._lock:
            self._matrix = matrix
        return matrix

    def _candidates(self, text: str, vector: npt.NDArray[np.float32]) -> dict[int, float]:
        """Candidate ids with their cosine: the nearest neighbours plus the FTS5 matches."""
        matrix = self._dense_matrix()
        cosines: dict[int, float] = {}
        if len(matrix.ids):
            scores = matrix.vectors @ vector
            for i in np.argsort(-scores, kind="stable")[:CANDIDATE_POOL]:
                cosines[int(matrix.ids[i])] = float(scores[i])
        expression = fts_query(clean_text(text))
        if expression is not None:
            with self._lock:
                rows = self._conn.execute(
                    "SELECT rowid FROM claims_fts WHERE claims_fts MATCH ?"
                    " ORDER BY bm25(claims_fts) LIMIT ?",
                    (expression, CANDIDATE_POOL),
                ).fetchall()
            position = {int(i): n for n, i in enumerate(matrix.ids)}
            for (rowid,) in rows:
                n = position.get(int(rowid))
                if n is not None and int(rowid) not in cosines:
                    cosines[int(rowid)] = float(matrix.vectors[n] @ vector)
        return cosines

    def match(
        self,
        text: str,
        *,
        as_of: datetime | None = None,
        limit: int | None = None,
        min_score: float | None = None,
    ) -> list[ClaimMatch]:
        """Stored claims matching `text`, best first: by default the strong and weak ones
        (`min_score` lowers the floor, e.g. 0 for a threshold sweep). Excluded publishers'
        ratings and reviews dated after `as_of` (default now) are left out."""
        if not text.strip():
            return []
        when = _utc(as_of) if as_of else utcnow()
        floor = self.cfg.weak_threshold if min_score is None else min_score
        vector = self._embedder.encode([clean_text(text) or text])[0]
        try:
            cosines = self._candidates(text, vector)
            if not cosines:
                return []
            marks = ",".join("?" * len(cosines))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT id, record_json FROM claims WHERE id IN ({marks})",  # noqa: S608
                    list(cosines),
                ).fetchall()
        except sqlite3.Error as exc:
            raise ClaimIndexError(f"cannot read {self._path}: {exc}") from exc
        query_terms = terms(text)
        weight = self.cfg.dense_weight
        matches: list[ClaimMatch] = []
        for rowid, payload in rows:
            record = ClaimRecord.model_validate_json(payload)
            if record.date is not None and _utc(record.date) > when:
                continue
            if self._excluded(record):
                continue
            dense = max(0.0, min(1.0, cosines[int(rowid)]))
            overlap = word_overlap(query_terms, terms(record.claim_text))
            score = weight * dense + (1.0 - weight) * overlap
            if score < floor:
                continue
            age = (when - _utc(record.date)).days if record.date is not None else None
            strength = strength_of(score, self.cfg)
            demoted: list[str] = []
            if strength is MatchStrength.STRONG and self.cfg.polarity_check:
                demoted = [f"polarity {m}" for m in compare(text, record.claim_text)]
                strength = MatchStrength.WEAK if demoted else strength
            matches.append(
                ClaimMatch(
                    record=record,
                    score=round(score, 4),
                    dense=round(dense, 4),
                    lexical=round(overlap, 4),
                    strength=strength,
                    possibly_outdated=age is None or age > self.cfg.max_age_days,
                    age_days=age,
                    query=text,
                    demoted=demoted,
                )
            )
        matches.sort(key=lambda m: (-m.score, m.record.review_url))
        return matches[: limit or self.cfg.max_matches]

    def _excluded(self, record: ClaimRecord) -> bool:
        for url in (record.review_url, record.publisher_site):
            if url and self._publishers.lookup(url).tier is Tier.EXCLUDED:
                return True
        return False


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


_DOMAIN_NAME_RE = re.compile(r"^[\w-]+(\.[\w-]+)+$")


def display_publisher(record: ClaimRecord) -> str:
    """A publisher name safe to print: a domain-like name ("snopes.com") would be linked by the
    platform as a URL that is not evidence, so it becomes its main label ("Snopes")."""
    name = " ".join(record.publisher_name.replace("@", " ").split())
    if _DOMAIN_NAME_RE.match(name) or not name:
        domain = registrable_domain(name or record.review_url) or ""
        label = domain.split(".", 1)[0]
        name = label[:1].upper() + label[1:] if label else ""
    name = name.replace(".", " ")
    return name[:40].strip()


@cache
def _reply_templates() -> dict[str, dict[str, str]]:
    source = resources.files("pipeline.data").joinpath("claim_replies.toml")
    return tomllib.loads(source.read_text(encoding="utf-8"))


def template_replies(match: ClaimMatch, lang: str | None = None) -> list[str]:
    """Candidate replies citing the fact-check, most informative first, in the post's language
    when `pipeline/data/claim_replies.toml` has it, else in English."""
    templates = _reply_templates()
    t = templates.get((lang or "en").split("-")[0].lower(), templates["en"])
    record = match.record
    url = cited_url(record)
    word = t["false"] if record.rating is Rating.FALSE else t["misleading"]
    if record.source is ClaimSource.APPROVED_ANSWER:
        return [t["ours"].format(word=word, url=url), t["ours_short"].format(word=word, url=url)]
    publisher = display_publisher(record)
    texts = [t["without_publisher"].format(word=word, url=url)]
    if publisher:
        texts.insert(0, t["with_publisher"].format(publisher=publisher, word=word, url=url))
    return texts


def templated_reply(
    match: ClaimMatch, platform: Platform, cfg: GuardConfig, lang: str | None = None
) -> str:
    """The first candidate reply that fits the platform's length rule (the guard still
    checks it; the last candidate is returned when none fits, for the guard to reject)."""
    candidates = template_replies(match, lang)
    form = reply_format(platform)
    for text in candidates:
        if form.fits(text, cfg):
            return text
    return candidates[-1]


def same_url(a: str, b: str) -> bool:
    return canonical_url(a) == canonical_url(b)
