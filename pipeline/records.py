"""Typed records that cross module and package boundaries.

The pipeline, the runtime (`bot/`), the adapters and storage meet through these models only.
They are pydantic models so that a whole decision can be stored as JSON and read back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

# Re-exported (the `as` form) for storage, which may import this module only.
from pipeline.images.records import ImageReport as ImageReport
from pipeline.images.records import SeenImage as SeenImage
from pipeline.images.records import merged_sighting as merged_sighting
from pipeline.images.records import ranked_by_cosine as ranked_by_cosine
from pipeline.video.records import VideoReport


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
    text: str | None = None  # the text read in it offline (OCR), filled by pipeline.images.reader


class Video(BaseModel):
    """A video attached to a post. `description` and `text` are filled by pipeline.video.reader
    from its keyframes (text with the times it was on screen)."""

    source: str  # local path or URL of the video file itself
    alt_text: str | None = None
    description: str | None = None
    text: str | None = None  # the text read in its keyframes, in order, without times


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
    videos: list[Video] = Field(default_factory=list)
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


class IndexStoreError(RuntimeError):
    """A store of index rows (`storage.indexes`) cannot be opened, read or written: the
    database fails, lacks the index tables, or holds embeddings of another size. The pipeline's
    stores raise it on as their own error, with one line naming the store."""


@dataclass(frozen=True)
class SiteFilter:
    """The local documents a search keeps: those whose registrable domain or host is one of
    `names`, or whose canonical URL without its scheme starts with one of `prefixes`."""

    names: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()


class SkipReason(StrEnum):
    """The fixed reasons a found page was not used. Other reasons carry their details (a fetch
    error, a date, a word count, a relevance score) and are written out in full."""

    NOT_NEEDED = "not needed: stop rule met by higher tiers"
    NOT_FETCHED = "not needed: stop rule met before it was fetched"
    ALREADY_FACT_CHECK = "already evidence: a matched fact-check"
    AUTHORITY_NEEDS_LLM = "authority statement: stance needs an LLM"


class DocumentUse(BaseModel):
    """Whether a fetched document was used, and why not if it was not."""

    url: str
    tier: Tier
    used: bool
    # A `SkipReason`, or one with details: "published after as-of (...)", "under 100 words (42)",
    # "fetch failed: ...", "relevance 0.21 below 0.30", the authority's stance.
    reason: str = ""
    relevance: float = 0.0
    published: datetime | None = None
    content_hash: str = ""


class Passage(BaseModel):
    url: str
    index: int
    text: str
    score: float


class EvidenceSource(StrEnum):
    """Where an evidence item came from."""

    WEB = "web"  # a searched and fetched page
    AUTHORITY = "authority"  # an authority account's own statement (`pipeline.authority.retrieval`)
    # A matched published fact-check (set by `claims`, weighed by the guard and the writer).
    FACT_CHECK = "fact_check"


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
    source: EvidenceSource = EvidenceSource.WEB


class EarlyDraft(BaseModel):
    """A reply the evidence extractor drafted along with its quotes, for the pages of one call.
    It replaces the writing call only when it rests on what the writer would have been given
    (`pipeline.reply.writer.early_draft`)."""

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


class ProblemCode(StrEnum):
    """The guard's rules, one code each (`pipeline.reply.guard` says what each checks)."""

    EMPTY = "empty"
    TOO_LONG = "too_long"
    INVALID_CHARACTERS = "invalid_characters"
    # A reply that cites no URL at all (every platform: a fact-check without a source is what
    # users distrust). Rewritable: the writer is asked again with the evidence URLs.
    NO_SOURCE = "no_source"
    # No longer produced (notes without a URL now fail `no_source`); kept so that the problems
    # stored by earlier versions still read back.
    NOTES_NEED_URL = "notes_need_url"
    NOTES_HASHTAG = "notes_hashtag"
    NOTES_BOILERPLATE = "notes_boilerplate"
    NOTES_URL_ONLY = "notes_url_only"
    URL_HIDDEN_CHARACTERS = "url_hidden_characters"
    URL_NOT_NORMALISED = "url_not_normalised"
    URL_CREDENTIALS = "url_credentials"
    URL_NOT_EVIDENCE = "url_not_evidence"
    URL_DOWNGRADE = "url_downgrade"
    MENTIONS_USER = "mentions_user"
    ABUSIVE = "abusive"
    COPIES_POST = "copies_post"
    # Whole-decision rules: a rewrite of the text cannot fix these.
    NO_REPLY_VERDICT = "no_reply_verdict"
    THIN_EVIDENCE = "thin_evidence"
    LOW_CONFIDENCE = "low_confidence"

    @property
    def rewritable(self) -> bool:
        """Whether a rewrite of the draft can fix it (not thin evidence, a verdict or
        confidence)."""
        return self not in _DECISION_CODES


_DECISION_CODES = frozenset(
    {ProblemCode.NO_REPLY_VERDICT, ProblemCode.THIN_EVIDENCE, ProblemCode.LOW_CONFIDENCE}
)


class Problem(BaseModel):
    """One broken guard rule: its code and what broke it (URLs, words, figures; quotes
    untrusted text). Written, shown and stored as "code: detail" (or "code" alone), the form
    reports count by rule; that text reads back into the same problem."""

    model_config = ConfigDict(frozen=True)

    code: ProblemCode
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.code.value}: {self.detail}" if self.detail else self.code.value

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: object) -> object:
        if isinstance(data, str):
            code, _, detail = data.partition(":")
            return {"code": code.strip(), "detail": detail.removeprefix(" ")}
        return data

    @model_serializer
    def _as_text(self) -> str:
        return str(self)


class GuardReport(BaseModel):
    valid: bool
    platform: Platform
    length: int
    limit: int
    problems: list[Problem] = Field(default_factory=list)
    # The reply's URLs, as written, that passed every URL rule: the only ones that may be links.
    urls: list[str] = Field(default_factory=list)


class RoundTrace(BaseModel):
    round: int
    queries: list[str]
    results: list[SearchResult] = Field(default_factory=list)
    documents: list[DocumentUse] = Field(default_factory=list)
    established: str = ""  # compressed summary carried to the next round (STEEL)
    search_errors: list[str] = Field(default_factory=list)
    # Extraction calls sent before the stop rule was settled above them (`research.speculate`),
    # those whose answers were not used, and drafts written from less than MUSE's order shows.
    speculative_calls: int = 0
    discarded_calls: int = 0
    discarded_drafts: int = 0
    redraft_calls: int = 0  # in-order calls sent again for a discarded draft's place
    # The next round's queries asked while this round ran (`research.requery_ahead`): "used",
    # or "discarded: ..." (asked again after the round); empty when not asked ahead.
    requery_ahead: str = ""


class MemoryUse(BaseModel):
    """A memory item shown to one LLM call of the check (pipeline.learning.memory), for the
    trace."""

    id: str
    phase: str  # analysis | search | writing
    trigger: str
    score: float


class WriterHedge(StrEnum):
    """Whether the writer was started beside extraction calls still out
    (`pipeline.research.hedged_writer`)."""

    NONE = "none"  # no late call stood before the draft used: nothing to hedge
    USED = "used"  # the late drafts did not fit: the writer's, started early, is the reply
    DISCARDED = "discarded"  # a late draft fitted: the writer's answer was dropped


class Trace(BaseModel):
    analysis: ClaimAnalysis | None = None
    rounds: list[RoundTrace] = Field(default_factory=list)
    writer_hedge: WriterHedge = WriterHedge.NONE
    llm_calls: list[LLMCall] = Field(default_factory=list)
    guard: list[GuardReport] = Field(default_factory=list)
    drafts: list[str] = Field(default_factory=list)
    images: list[ImageReport] = Field(default_factory=list)  # intake, OCR, matches per image
    videos: list[VideoReport] = Field(default_factory=list)  # keyframes, text read, per video
    memory: list[MemoryUse] = Field(default_factory=list)  # guidance items shown, per phase


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
