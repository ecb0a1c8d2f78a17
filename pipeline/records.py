"""Typed records that cross module and package boundaries.

The pipeline, the runtime (`bot/`), the adapters and storage meet through these models only.
They are pydantic models so that a whole decision can be stored as JSON and read back unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


def utcnow() -> datetime:
    return datetime.now(UTC)


class Platform(StrEnum):
    X = "x"
    BLUESKY = "bluesky"
    NOTES = "notes"


class Tier(StrEnum):
    """Publisher credibility tiers, best first. AUTHORITY is an account's own statement."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    AUTHORITY = "authority"
    UNKNOWN = "unknown"
    EXCLUDED = "excluded"

    @property
    def searchable(self) -> bool:
        return self in (Tier.HIGH, Tier.MEDIUM, Tier.LOW)


# Search order of the web tiers (MUSE): High, then Medium, then Low.
SEARCH_TIERS: tuple[Tier, ...] = (Tier.HIGH, Tier.MEDIUM, Tier.LOW)
TIER_RANK: dict[Tier, int] = {
    Tier.HIGH: 0,
    Tier.AUTHORITY: 0,
    Tier.MEDIUM: 1,
    Tier.LOW: 2,
    Tier.UNKNOWN: 3,
    Tier.EXCLUDED: 4,
}


class Verdict(StrEnum):
    REFUTED = "refuted"
    MISLEADING = "misleading"  # true in part, or needs context
    SUPPORTED = "supported"
    NOT_ENOUGH_EVIDENCE = "not_enough_evidence"
    NOT_CHECKABLE = "not_checkable"


class Stance(StrEnum):
    REFUTES = "refutes"  # contradicts the post outright
    CONTEXT = "context"  # supplies what the post leaves out
    SUPPORTS = "supports"


class DecisionStatus(StrEnum):
    REPLY = "reply"  # a guarded draft exists
    ABSTAIN = "abstain"  # the bot decided not to speak; reasons say why
    NEEDS_LLM = "needs_llm"  # no LLM endpoint configured and the request needed one
    FAILED = "failed"  # a technical failure; never disguised as "no evidence"


class Image(BaseModel):
    """An image attached to a post. `description` is filled by the describer (OCR + caption)."""

    source: str  # local path or URL
    alt_text: str | None = None
    description: str | None = None


class Post(BaseModel):
    """A social post as the pipeline sees it. All text in it is untrusted data."""

    model_config = ConfigDict(frozen=False)

    id: str
    author: str
    text: str
    created_at: datetime
    platform: str = "local"
    url: str | None = None
    lang: str | None = None
    links: list[str] = Field(default_factory=list)
    images: list[Image] = Field(default_factory=list)
    quoted: Post | None = None
    parent: Post | None = None


class ClaimAnalysis(BaseModel):
    checkable: bool
    claims: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)  # what must be verified
    queries: list[str] = Field(default_factory=list)
    reason: str = ""  # why not checkable, when it is not


class SearchResult(BaseModel):
    url: str
    title: str = ""
    snippet: str = ""
    provider: str
    query: str
    rank: int
    published: datetime | None = None
    tier: Tier = Tier.UNKNOWN
    domain: str = ""


class Document(BaseModel):
    """A fetched page: the evidence snapshot. `text` is the extracted main text."""

    url: str
    canonical_url: str
    final_url: str | None = None
    ok: bool
    status_code: int | None = None
    content_type: str | None = None
    title: str = ""
    text: str = ""
    published: datetime | None = None
    date_source: str | None = None  # which metadata gave the date, or None if dateless
    word_count: int = 0
    content_hash: str = ""
    fetched_at: datetime = Field(default_factory=utcnow)
    error: str | None = None  # technical failure (dead link, SSRF refusal, too big, ...)


class DocumentUse(BaseModel):
    """Whether a fetched document was used, and why not if it was not."""

    url: str
    tier: Tier
    used: bool
    reason: str = ""  # e.g. "published after as-of", "under 100 words", "fetch failed: ..."
    relevance: float = 0.0
    published: datetime | None = None
    content_hash: str = ""


class Passage(BaseModel):
    url: str
    index: int
    text: str
    score: float


# `Evidence.source` of a matched published fact-check (set by `claims`, weighed by the guard
# and the writer).
FACT_CHECK_SOURCE = "fact_check"


class Evidence(BaseModel):
    url: str
    title: str = ""
    domain: str = ""
    tier: Tier
    stance: Stance
    confidence: float = Field(ge=0.0, le=1.0)
    quote: str
    relevance: float = 0.0
    published: datetime | None = None
    content_hash: str = ""
    round: int = 1
    source: str = "web"  # web | authority | fact_check


class EarlyDraft(BaseModel):
    """A reply the evidence extractor drafted along with its quotes, for the pages of one call.
    It replaces the writing call only when it rests on what the writer would have been given
    (`pipeline.write.early_draft`)."""

    verdict: Verdict
    text: str
    page_urls: list[str]  # canonical URLs of the pages that call read
    known: list[str] = Field(default_factory=list)  # evidence shown to it (`evidence.evidence_key`)
    complete: bool  # every quote the call returned was found on its page


class LLMCall(BaseModel):
    step: str
    model: str
    ok: bool
    attempts: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    error: str | None = None
    started_at: datetime = Field(default_factory=utcnow)


class GuardReport(BaseModel):
    valid: bool
    platform: Platform
    length: int
    limit: int
    problems: list[str] = Field(default_factory=list)
    # The reply's URLs, as written, that passed every URL rule: the only ones that may be links.
    urls: list[str] = Field(default_factory=list)


class RoundTrace(BaseModel):
    round: int
    queries: list[str]
    results: list[SearchResult] = Field(default_factory=list)
    documents: list[DocumentUse] = Field(default_factory=list)
    established: str = ""  # compressed summary carried to the next round (STEEL)
    search_errors: list[str] = Field(default_factory=list)


class Trace(BaseModel):
    analysis: ClaimAnalysis | None = None
    rounds: list[RoundTrace] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    guard: list[GuardReport] = Field(default_factory=list)
    drafts: list[str] = Field(default_factory=list)


class Decision(BaseModel):
    status: DecisionStatus
    verdict: Verdict | None = None
    confidence: float = 0.0
    platform: Platform
    reply: str | None = None
    # Every link the reply will carry: the guard's approved URLs, as written in `reply`.
    urls: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    lang: str | None = None
    as_of: datetime
    trace: Trace = Field(default_factory=Trace)
    timings: dict[str, float] = Field(default_factory=dict)
    documents: list[Document] = Field(default_factory=list)  # snapshots of used pages
    # Relevant passages found without an LLM to judge them (status needs_llm).
    candidates: list[Passage] = Field(default_factory=list)
    error: str | None = None
