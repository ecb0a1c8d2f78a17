"""The records of the claim index (`pipeline.claims.index`): a fact-check or approved answer, and a
match of one to a post. Importers build `ClaimRecord`s; `ClaimIndex.match` returns
`ClaimMatch`es."""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel

from pipeline.claims.ratings import Rating
from pipeline.failures import PipelineFailure
from pipeline.web.urls import canonical_url


class ClaimIndexError(PipelineFailure, RuntimeError):
    """The claim store cannot be used (unreadable database, other embedding size)."""

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
    # The review's title as the fact-checker wrote it ("Did X Say Y?"): a second wording of
    # the claim that can confirm a match (`pipeline.claims.review_titles`). Not part of `key`.
    review_title: str = ""

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
    title_cosine: float | None = None  # with the review's title, where it was scored
    strength: MatchStrength
    possibly_outdated: bool
    age_days: int | None = None
    query: str = ""  # the text matched (a claim of the post, or the post itself)
    # Why a match that scored strong is not: a polarity mismatch
    # (`pipeline.claims.polarity.compare`), an LLM that judged the claims opposite or different.
    # Shown to moderators.
    demoted: list[str] = []
