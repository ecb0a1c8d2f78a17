"""The reply's first draft: the extractor's if one fits, else the writer's, started early when
extraction calls it depends on are still out.

A speculative extraction call's draft rests on less evidence than MUSE's order would have shown
it, so that call is sent again in order for its draft (`pipeline.research.round`); the draft
that becomes the reply is the first one that fits in call order
(`pipeline.reply.writer.early_draft`), else the writer's. When the research ends with such a call
still out and no draft in hand that fits, waiting for it and only then asking the writer puts two
LLM calls end to end: that was the slowest posts' tail (the p95 of `bench.pipeline_latency`). So the
writer is started at once beside it, a hedged request, when the late draft is unlikely to fit: its
stale draft, written by the same call shown less, did not reach the round's verdict. If the late
draft fits after all, it is the reply and the writer's answer is dropped (one LLM call spent); if
not, the writer's is, and it did not wait. When the stale draft did reach the verdict, its late
draft usually fits and the writer waits, as before. The reply is the same every way, the one MUSE's
order gives; the trace records which way it went (`Trace.writer_hedge`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pipeline.records import EarlyDraft, Evidence, Verdict, WriterHedge
from pipeline.reply.writer import early_draft
from pipeline.research.round import LateDraft

# Prepares the writing call on the caller's thread (its memory lookup records what it shows)
# and returns it, to be run there or on a thread of its own.
Writer = Callable[[], Callable[[], str]]


@dataclass(frozen=True)
class FirstDraft:
    text: str
    early: bool  # drafted by an extraction call (no writing call needed)
    hedge: WriterHedge


def first_draft(
    drafts: Sequence[tuple[int, EarlyDraft]],
    late: Sequence[LateDraft],
    verdict: Verdict,
    evidence: Sequence[Evidence],
    writer: Writer,
    *,
    hedge: bool = True,
) -> FirstDraft:
    """The first draft for `verdict` over `evidence` (in `writer_order`): the first of
    `drafts` (by call order) and `late` that fits, else the writer's, started beside the late
    calls when `hedge` is on, none of `drafts` fits and no late call's stale draft had
    reached `verdict`."""
    ready = sorted(drafts, key=lambda d: d[0])
    found = early_draft([d for _, d in ready], verdict, evidence)
    found_order = next((n for n, d in ready if d is found), None)
    before = [d for d in late if found_order is None or d.order < found_order]
    if not before:
        return _chosen(found, writer, WriterHedge.NONE)
    likely_fits = any(d.stale_verdict is verdict for d in before)
    if found is not None or likely_fits or not hedge:
        return _chosen(_first_fitting(ready, before, verdict, evidence), writer, WriterHedge.NONE)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="writer-hedge")
    try:
        written = pool.submit(writer())
        found = _first_fitting(ready, before, verdict, evidence)
        if found is not None:
            written.cancel()  # not sent yet: never sent; else its answer is dropped
            return FirstDraft(found.text, early=True, hedge=WriterHedge.DISCARDED)
        return FirstDraft(written.result(), early=False, hedge=WriterHedge.USED)
    finally:
        pool.shutdown(wait=False)


def _first_fitting(
    ready: list[tuple[int, EarlyDraft]],
    late: list[LateDraft],
    verdict: Verdict,
    evidence: Sequence[Evidence],
) -> EarlyDraft | None:
    """Waits for `late`, then the first draft of all that fits, in call order."""
    arrived = [(d.order, draft) for d in late if (draft := d.draft()) is not None]
    merged = sorted([*ready, *arrived], key=lambda d: d[0])
    return early_draft([d for _, d in merged], verdict, evidence)


def _chosen(found: EarlyDraft | None, writer: Writer, hedge: WriterHedge) -> FirstDraft:
    if found is not None:
        return FirstDraft(found.text, early=True, hedge=hedge)
    return FirstDraft(writer()(), early=False, hedge=hedge)
