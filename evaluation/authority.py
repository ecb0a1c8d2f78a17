"""The authority retriever on CLEF 2024 Task 5: each rumor's own timeline indexed in a
throw-away authority index, the top k statements retrieved with the embedded models only (BM25
and the bundled embedding model, fused as `AuthorityConfig` says) and scored for MAP and R@5;
with an LLM, the stance of each retrieved statement judged and aggregated by the signed vote
into a verdict, scored for Macro-F1 and Strict Macro-F1 (`evaluation.taskfive`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evaluation.taskfive import (
    Rumor,
    TaskFiveFormatError,
    retrieval_scores,
    snowflake_time,
    verdict_scores,
)
from pipeline.authority.retrieval import (
    AuthorityIndex,
    Statement,
    aggregate,
    judge_stances,
    permalink,
)
from pipeline.config import AuthorityConfig, LLMConfig, RelevanceConfig
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.relevance.scoring import get_embedder
from storage.indexes import open_statement_rows

STANCE_TO_LABEL = {
    "supports": "SUPPORTS",
    "refutes": "REFUTES",
    "not_enough_info": "NOT ENOUGH INFO",
}
SCORED_K = 5  # the task scores the first five statements, whatever was retrieved


@dataclass
class RumorResult:
    rumor_id: str
    ranked: list[tuple[str, float]]  # (tweet id, fused score), best first
    label: str | None = None  # predicted verdict, with an LLM
    vote: float | None = None


@dataclass(frozen=True)
class AuthorityReport:
    payload: dict[str, Any]  # the --json output
    lines: list[str]  # "MAP 0.xxx", "R@5 0.xxx", and the F1 lines when verdicts were judged


def statements_of(rumor: Rumor) -> list[Statement]:
    """The rumor's timeline as authority statements (time from the tweet id)."""
    out: list[Statement] = []
    for entry in rumor.timeline:
        created = snowflake_time(entry.post_id)
        if created is None:
            raise TaskFiveFormatError(f"{rumor.id}: tweet id {entry.post_id!r} is not a snowflake")
        out.append(
            Statement(
                platform="x",
                account=entry.handle,
                post_id=entry.post_id,
                text=entry.text,
                created_at=created,
                url=permalink("x", entry.handle, entry.post_id),
            )
        )
    return out


def run_authority(
    rumors: list[Rumor],
    cfg: AuthorityConfig,
    relevance: RelevanceConfig,
    llm_cfg: LLMConfig | None,
    *,
    k: int = 5,
    on_rumor: Callable[[Rumor], None] | None = None,
) -> list[RumorResult]:
    """Retrieve (and, with a configured `llm_cfg`, judge) each rumor against its own timeline."""
    embedder = get_embedder(relevance)
    llm = LLMClient(llm_cfg) if llm_cfg is not None and llm_cfg.configured else None
    ledger = CallLedger()
    results: list[RumorResult] = []
    for rumor in rumors:
        with AuthorityIndex(open_statement_rows(":memory:"), embedder, cfg=cfg) as index:
            index.add_statements(statements_of(rumor))
            retrieved = index.retrieve(rumor.text, k=k)
        result = RumorResult(rumor.id, [(r.statement.post_id, r.score) for r in retrieved])
        if llm is not None:
            assert llm_cfg is not None
            judgements = judge_stances(
                rumor.text, retrieved, llm, ledger, max_chars=llm_cfg.max_post_chars
            )
            verdict = aggregate(judgements, cfg.vote_threshold)
            result.label = STANCE_TO_LABEL[verdict.stance.value]
            result.vote = verdict.score
        results.append(result)
        if on_rumor is not None:
            on_rumor(rumor)
    return results


def authority_report(
    rumors: list[Rumor],
    gold: Mapping[str, set[str]],
    results: list[RumorResult],
    cfg: AuthorityConfig,
    *,
    k: int,
    judged: bool,
) -> AuthorityReport:
    """Score the results against the qrels (and, when `judged`, the gold labels)."""
    ids = {r.rumor_id: [doc for doc, _s in r.ranked] for r in results}
    scores = retrieval_scores(ids, gold, k=SCORED_K)
    payload: dict[str, Any] = {
        "map": round(scores.map, 4),
        "recall_at_5": round(scores.recall_at_5, 4),
        "rumors_scored": scores.rumors,
        "rumors_retrieved": len(results),
        "config": {
            "fusion": cfg.fusion,
            "dense_weight": cfg.dense_weight,
            "rrf_k": cfg.rrf_k,
            "bm25_k1": cfg.bm25_k1,
            "bm25_b": cfg.bm25_b,
            "k": k,
        },
        "per_rumor": {
            q: {"ap": round(a, 4), "r@5": round(r, 4)} for q, (a, r) in scores.per_rumor.items()
        },
    }
    lines = [f"MAP {scores.map:.3f}", f"R@5 {scores.recall_at_5:.3f}"]
    if judged:
        predicted = {r.rumor_id: r.label or "NOT ENOUGH INFO" for r in results}
        verdicts = verdict_scores(rumors, predicted, ids)
        payload["macro_f1"] = round(verdicts.macro_f1, 4)
        payload["strict_macro_f1"] = round(verdicts.strict_macro_f1, 4)
        payload["predictions"] = {r.rumor_id: {"label": r.label, "vote": r.vote} for r in results}
        lines += [
            f"Macro-F1 {verdicts.macro_f1:.3f}",
            f"Strict-Macro-F1 {verdicts.strict_macro_f1:.3f}",
        ]
    return AuthorityReport(payload=payload, lines=lines)
