"""Evidence from authorities' own statements (CLEF 2024 CheckThat! Task 5).

An authority is an account whose word settles claims on its topics or about itself: a health
ministry on vaccines in its country, a club on its own coach, a person on their own death.
This module stores their statements (pulled from timelines on a schedule), retrieves the ones
that speak to a claim, has the LLM judge each one's stance, and aggregates the stances.

Retrieval (`AuthorityIndex.retrieve`) only considers statements of the given accounts published
before the checked post, and fuses two scores over that candidate set:

* lexical: BM25 (`bm25s`, k1 1.2, b 0.75) over `pipeline.relevance.lexical.terms` (links removed,
  hashtags split, stopwords dropped, light stemming);
* dense: cosine of the embedding model's vectors of the link-free texts.

The setting is decided by 5-fold cross-validation over the Task 5 English dev rumors
(bench/authority_cv.py) and one rule (`evaluation.cv_rule`): a tuned setting replaces plain BM25
only when its held-out MAP gain exceeds the folds' spread. Tuned on all 19 rumors with gold
evidence, a weighted sum of min-max normalised scores (dense weight 0.4-0.5) reached MAP 0.723
against plain BM25's 0.680, and fell below BM25 on held-back rumors (0.565 against 0.655).
Breaking BM25's ties (statements sharing no word with the claim all score 0) by cosine instead
of by date, and the setting the folds chose, both scored MAP 0.696 ± 0.193 held out against
plain BM25's 0.679 ± 0.190 (R@5 0.781 against 0.714): a gain of 0.017 against a spread of
0.19, and on the held-back test rumors the cosine tie-break scored MAP 0.542 / R@5 0.631
against plain BM25's 0.655 / 0.591. So the default is plain BM25 (`dense_weight` 0, ties by
date, no tuned knob); the cosine screens statements (`min_similarity`) and is reported as
their relevance.

Stance (`judge_stances`) is one LLM call per statement (supports / refutes / not enough info,
with a confidence), and `aggregate` is CLEF's signed, confidence-weighted mean over the
SUPPORTS and REFUTES judgements only, so a statement that says nothing on the claim does not
cancel one that does; |mean| below the threshold (0.15) means not enough information.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from pipeline.authority.rows import StatementRow, StatementRows
from pipeline.config import AuthorityAccount, AuthorityConfig, LLMConfig
from pipeline.failures import PipelineFailure
from pipeline.indexes.store import StoredIndex
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.llm.prompts import DATA_RULE, cut_text, quote_untrusted
from pipeline.records import Evidence, EvidenceSource, Stance, Tier
from pipeline.relevance.lexical import clean_text, terms
from pipeline.relevance.scoring import Embedder

# A token `terms` can never produce: BM25 needs every document to have at least one.
_EMPTY_DOC_TOKEN = "\x00"  # noqa: S105 - not a secret
_MENTION_RE = re.compile(r"(?<![\w@])@([A-Za-z0-9_][A-Za-z0-9_.\-]*[A-Za-z0-9_]|[A-Za-z0-9_])")
# Names and tags shorter than this are matched case-sensitively ("WHO" is not "who").
_CASELESS_MIN = 4


class AuthorityIndexError(PipelineFailure, RuntimeError):
    """The statement store cannot be used (unreadable database, other embedding size)."""

    stage = "authority"


class Statement(BaseModel):
    """One post by an authority account, as the timeline pull delivers it."""

    platform: str = "x"
    account: str  # handle; stored lower-case without "@"
    post_id: str
    text: str
    created_at: datetime
    url: str  # the post's permalink: what a reply cites


@dataclass(frozen=True)
class RetrievedStatement:
    statement: Statement
    score: float  # fused score (its scale depends on the fusion method)
    lexical: float  # raw BM25 score
    dense: float  # cosine similarity in [-1, 1]
    rank: int  # 1-based


class AuthorityStance(StrEnum):
    SUPPORTS = "supports"
    REFUTES = "refutes"
    NOT_ENOUGH_INFO = "not_enough_info"


@dataclass(frozen=True)
class StanceJudgement:
    retrieved: RetrievedStatement
    stance: AuthorityStance
    confidence: float


@dataclass(frozen=True)
class AuthorityVerdict:
    stance: AuthorityStance
    score: float  # signed mean: + supports, − refutes
    voters: int  # judgements that were SUPPORTS or REFUTES


def normalise_handle(handle: str) -> str:
    return handle.strip().removeprefix("@").lower()


def permalink(platform: str, account: str, post_id: str) -> str:
    """The public URL of a post: X status links, Bluesky web links (from an at:// URI too)."""
    handle = normalise_handle(account)
    if platform == "bluesky":
        rkey = post_id.rsplit("/", 1)[-1]
        return f"https://bsky.app/profile/{handle}/post/{rkey}"
    return f"https://x.com/{handle}/status/{post_id}"


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _minmax(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    if len(values) == 0:
        return values
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.zeros_like(values)
    return (values - low) / (high - low)


def _ranks(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[np.argsort(-values, kind="stable")] = np.arange(1, len(values) + 1)
    return ranks


def fuse(
    lexical: npt.NDArray[np.float64], dense: npt.NDArray[np.float64], cfg: AuthorityConfig
) -> npt.NDArray[np.float64]:
    """One score per candidate from its BM25 and cosine scores (see the module docstring)."""
    if cfg.fusion == "rrf":
        fused = 1.0 / (cfg.rrf_k + _ranks(dense))
        has_words = lexical > 0
        # A statement sharing no word with the claim has no lexical rank at all.
        fused[has_words] += 1.0 / (cfg.rrf_k + _ranks(lexical)[has_words])
        return fused
    weight = cfg.dense_weight
    return weight * _minmax(dense) + (1.0 - weight) * _minmax(lexical)


def rank_order(
    fused: npt.NDArray[np.float64],
    dense: npt.NDArray[np.float64],
    tie_break: Literal["date", "cosine"] = "date",
) -> npt.NDArray[np.intp]:
    """Candidate indices best first: by fused score, ties in input order (newest first), or
    with `tie_break` "cosine" by cosine first. On the Task 5 dev rumors the cosine tie-break
    raised BM25's held-out MAP by 0.017 (0.679 -> 0.696), under the folds' spread of 0.19, and
    on the held-back test rumors it scored 0.542 against 0.655: date is the default."""
    if tie_break == "cosine":
        return np.lexsort((-dense, -fused))
    return np.argsort(-fused, kind="stable")


def bm25_scores(
    query: Sequence[str], documents: Sequence[Sequence[str]], cfg: AuthorityConfig
) -> npt.NDArray[np.float64]:
    """BM25 of every document for `query`; statistics come from `documents` alone, so a
    timeline is scored as the collection it is."""
    if not documents:
        return np.zeros(0, dtype=np.float64)
    if not query:
        return np.zeros(len(documents), dtype=np.float64)
    # bm25s (and scipy under it) cost a fifth of a second to import: a process pays for them
    # when it first scores a timeline, not at start-up.
    import bm25s

    # bm25s sets its own logger to DEBUG at import, which floods every command's output.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    model = bm25s.BM25(k1=cfg.bm25_k1, b=cfg.bm25_b)
    model.index([list(d) or [_EMPTY_DOC_TOKEN] for d in documents], show_progress=False)
    return np.asarray(model.get_scores(list(query)), dtype=np.float64)


class AuthorityIndex(StoredIndex):
    """Authority statements kept in `rows` (`pipeline.authority.rows`), with their terms and
    embeddings (the Task 5 evaluation builds a throw-away store per rumor). Safe to use from
    several threads.
    """

    kind = "authority"
    error = AuthorityIndexError

    def __init__(
        self, rows: StatementRows, embedder: Embedder, *, cfg: AuthorityConfig | None = None
    ) -> None:
        self._embedder = embedder
        self._cfg = cfg or AuthorityConfig()
        self._lock = threading.RLock()
        self._statements = rows
        self._open(rows, embedder.dim)

    # --- writing ------------------------------------------------------------------------------

    def add_statements(self, statements: Iterable[Statement]) -> int:
        """Store statements not stored yet (keyed by platform and post id); returns how many
        were new. The scheduled timeline pull calls this with each page it fetches."""
        batch: dict[tuple[str, str], Statement] = {}
        for item in statements:
            batch.setdefault((item.platform, item.post_id), item)
        if not batch:
            return 0
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            known = self._statements.known_posts([post_id for _, post_id in batch])
        fresh = [s for key, s in batch.items() if key not in known]
        if not fresh:
            return 0
        vectors = self._embedder.encode([clean_text(s.text) or s.text for s in fresh])
        rows: list[StatementRow] = []
        for item, vector in zip(fresh, vectors, strict=True):
            created = _utc(item.created_at)
            rows.append(
                {
                    "platform": item.platform,
                    "account": normalise_handle(item.account),
                    "post_id": item.post_id,
                    "text": item.text,
                    "created_at": created.isoformat(),
                    "created_ts": created.timestamp(),
                    "url": item.url,
                    "terms": " ".join(terms(item.text)),
                    "embedding": vector.astype("<f4").tobytes(),
                }
            )
        with self._lock, self._failing_as(f"cannot store statements in {self._where}"):
            self._statements.insert_new(rows, self._embedder.dim)
        return len(rows)

    # --- reading ------------------------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            return self._statements.count()

    def accounts(self) -> set[str]:
        """Handles that have at least one stored statement."""
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            return self._statements.accounts()

    def latest(self, platform: str, account: str) -> Statement | None:
        """The newest stored statement of an account: the cursor for the next timeline pull."""
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            row = self._statements.latest(platform, normalise_handle(account))
        return None if row is None else _statement(row)

    def retrieve(
        self,
        claim: str,
        accounts: Sequence[str] | None = None,
        *,
        before: datetime | None = None,
        k: int | None = None,
    ) -> list[RetrievedStatement]:
        """The `k` statements (default `cfg.k`) of `accounts` (None: every account) published
        strictly before `before` that best match `claim`, best first."""
        limit = self._cfg.k if k is None else k
        if limit <= 0 or (accounts is not None and not accounts):
            return []
        handles = None if accounts is None else sorted({normalise_handle(a) for a in accounts})
        before_ts = None if before is None else _utc(before).timestamp()
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            rows = self._statements.candidates(handles, before_ts)
        if not rows:
            return []
        dim = self._embedder.dim
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim)
        query_vector = self._embedder.encode([clean_text(claim) or claim])[0]
        dense = np.clip(matrix.astype(np.float64) @ query_vector.astype(np.float64), -1.0, 1.0)
        lexical = bm25_scores(terms(claim), [r[1].split() for r in rows], self._cfg)
        fused = fuse(lexical, dense, self._cfg)
        order = rank_order(fused, dense, self._cfg.tie_break)[:limit]
        return [
            RetrievedStatement(
                statement=_statement(rows[i][0]),
                score=round(float(fused[i]), 6),
                lexical=round(float(lexical[i]), 6),
                dense=round(float(dense[i]), 6),
                rank=rank,
            )
            for rank, i in enumerate(order, start=1)
        ]


def _statement(row: Sequence[object]) -> Statement:
    platform, account, post_id, text, created_at, url = row[:6]
    return Statement(
        platform=str(platform),
        account=str(account),
        post_id=str(post_id),
        text=str(text),
        created_at=datetime.fromisoformat(str(created_at)),
        url=str(url),
    )


# --- which authorities -----------------------------------------------------------------------


def _phrase_in(phrase: str, text: str) -> bool:
    phrase = " ".join(phrase.split())
    if not phrase:
        return False
    flags = re.IGNORECASE if len(phrase) >= _CASELESS_MIN else 0
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, flags) is not None


def mentioned_handles(text: str) -> set[str]:
    return {normalise_handle(m.group(1)) for m in _MENTION_RE.finditer(text)}


def relevant_accounts(
    text: str, registry: Sequence[AuthorityAccount], known: Iterable[str] = ()
) -> list[str] | None:
    """Handles whose statements count as evidence for `text`; None means every account.

    The person or body a claim is about is an authority on it: an account mentioned by
    `@handle`, or a registry account whose display name appears, is always included (also an
    account outside the registry whose statements are stored, `known`). Registry accounts whose
    topic or region tags appear in the text are included too. When nothing in the registry
    applies, every registry account is searched and retrieval decides; with no registry at
    all, every stored account is.
    """
    stored = {normalise_handle(h) for h in known}
    chosen: list[str] = []
    mentioned = mentioned_handles(text)
    for account in registry:
        handle = normalise_handle(account.handle)
        named = handle in mentioned or (account.name and _phrase_in(account.name, text))
        tagged = any(_phrase_in(tag, text) for tag in (*account.topics, *account.regions))
        if named or tagged:
            chosen.append(handle)
    chosen.extend(sorted(h for h in mentioned if h in stored and h not in chosen))
    if chosen:
        return list(dict.fromkeys(chosen))
    if registry:
        return list(dict.fromkeys(normalise_handle(a.handle) for a in registry))
    return None


# --- stance -----------------------------------------------------------------------------------

STANCE_SYSTEM = f"""You judge what a statement posted by an authority account says about a claim.
{DATA_RULE}
The claim is inside a <post> block and the statement inside an <evidence> block.
- "supports": the statement confirms the claim;
- "refutes": the statement denies the claim, calls it false or a rumour, or states facts that
  cannot be true together with it;
- "not_enough_info": the statement does not settle the claim either way (another topic, or the
  same topic without confirming or denying it).
confidence is how certain you are of that stance, from 0 to 1.
"""


class AuthorityStanceAnswer(BaseModel):
    """The schema the stance LLM answers with."""

    stance: Literal["supports", "refutes", "not_enough_info"]
    confidence: float = Field(ge=0.0, le=1.0)


def stance_user(
    claim: str, retrieved: RetrievedStatement, max_chars: int = LLMConfig().max_post_chars
) -> str:
    """The stance prompt; the claim and the statement are each cut to `max_chars` (on a
    grapheme boundary): a statement is a post, and posts can be of any size."""
    item = retrieved.statement
    return "\n\n".join(
        [
            quote_untrusted("post", cut_text(claim, max_chars)),
            quote_untrusted(
                "evidence",
                cut_text(item.text, max_chars),
                account=f"@{item.account}",
                platform=item.platform,
                time=_utc(item.created_at).isoformat(),
            ),
            "What stance does the statement take towards the claim?",
        ]
    )


def judge_stances(
    claim: str,
    retrieved: Sequence[RetrievedStatement],
    llm: LLMClient,
    ledger: CallLedger,
    *,
    concurrency: int = 5,
    max_chars: int = LLMConfig().max_post_chars,
) -> list[StanceJudgement]:
    """One LLM judgement per statement (pairwise, as in CLEF's best verification system), run
    side by side since they are independent; results keep the retrieval order.
    LLM failures raise (`LLMError`); they are never read as "not enough info"."""

    def judge(item: RetrievedStatement) -> StanceJudgement:
        answer = llm.structured(
            "authority_stance",
            system=STANCE_SYSTEM,
            user=stance_user(claim, item, max_chars),
            schema=AuthorityStanceAnswer,
            ledger=ledger,
        )
        return StanceJudgement(item, AuthorityStance(answer.stance), float(answer.confidence))

    if len(retrieved) <= 1 or concurrency <= 1:
        return [judge(item) for item in retrieved]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(retrieved))) as pool:
        return list(pool.map(judge, retrieved))


def aggregate(judgements: Sequence[StanceJudgement], threshold: float) -> AuthorityVerdict:
    """CLEF's signed vote: the mean of +confidence (supports) and −confidence (refutes) over
    those two stances only; |mean| ≥ threshold decides, otherwise not enough info."""
    votes = [
        j.confidence if j.stance is AuthorityStance.SUPPORTS else -j.confidence
        for j in judgements
        if j.stance is not AuthorityStance.NOT_ENOUGH_INFO
    ]
    if not votes:
        return AuthorityVerdict(AuthorityStance.NOT_ENOUGH_INFO, 0.0, 0)
    # Rounded so that a mean meant to equal the threshold (0.7 − 0.5 over two votes against
    # 0.1) is not pushed under it by binary floating point.
    score = round(sum(votes) / len(votes), 9)
    if score >= threshold:
        stance = AuthorityStance.SUPPORTS
    elif score <= -threshold:
        stance = AuthorityStance.REFUTES
    else:
        stance = AuthorityStance.NOT_ENOUGH_INFO
    return AuthorityVerdict(stance, score, len(votes))


def to_evidence(judgement: StanceJudgement, *, round_number: int = 1) -> Evidence | None:
    """An authority statement as evidence (its permalink, tier AUTHORITY); None for NEI."""
    if judgement.stance is AuthorityStance.NOT_ENOUGH_INFO:
        return None
    item = judgement.retrieved.statement
    handle = normalise_handle(item.account)
    return Evidence(
        url=item.url,
        title=f"@{handle} on {item.platform}",
        # The account, not the platform, is the source: two authorities are two independent
        # sources for the guard, and the writer sees who said it.
        domain=f"@{handle}",
        tier=Tier.AUTHORITY,
        stance=Stance.SUPPORTS if judgement.stance is AuthorityStance.SUPPORTS else Stance.REFUTES,
        confidence=max(0.0, min(1.0, judgement.confidence)),
        quote=item.text,
        relevance=max(0.0, min(1.0, judgement.retrieved.dense)),
        published=_utc(item.created_at),
        round=round_number,
        source=EvidenceSource.AUTHORITY,
    )
