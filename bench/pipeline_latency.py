"""Latency: wall time per post with our concurrency against the same pipeline forced to one worker.

Each fixture post (`bench.fixtures`) goes through the real `Checker` twice, once with
`ResearchConfig.concurrency` at its default and once with `concurrency=1`, alternating post by
post so that drift on the machine hits both modes alike. Everything on this side of the network
is the real code (LLM client, tiered search, fetcher, extraction, relevance model, verdict,
writer, guard); the far side is simulated by `bench.world`, with the issue's delays:

* the LLM is `FakeLLM` over HTTP, answering after 1.5 s per call;
* search is a `SearchProvider` that answers after 0.5 s per query and tier;
* each page is served by the local HTTP server after 1.0 s, reached through the real `Fetcher`
  (via a forward proxy; see `bench.world` for why this, and not a fake fetcher that returns
  pre-extracted documents: extraction cost stays inside the timed run).

With one worker the research loop runs every search, then every fetch, then every extraction,
one at a time. That is sequential like MUSE, but not quite MUSE's order: MUSE searched and
fetched the Medium and Low tiers only when the High tier had not met the stop rule, while one
worker here still searches and fetches them (and then skips their extraction). The
`muse_order_*` numbers subtract that work from the sequential wall time, using the delays
above and the trace of pages marked "not needed"; they estimate MUSE's order, they are not a
measurement.

Our mode extracts lower tiers speculatively while the calls above them could still meet the
stop rule (`ResearchConfig.speculate_tiers`); one worker never does. What that costs is read
from the LLM server's own log (`FakeLLM.requests`, discarded calls included, which the trace
may not list if their answers came back after the decision): `extra_llm_calls_*` and
`extra_prompt_tokens_*` are per post beyond the one-worker run's, mean and max.

Each post's timeline (`critical_path`, logged under its line) is read from the LLM calls in its
trace: the time with an LLM call in flight, and the gaps between calls, where the post waited on
searches, fetches or the pipeline's own compute. `*_mean_first_research_gap_s` is the first such
gap after the analysis: how long research kept the LLM idle before the first extraction.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from bench import fixtures, ratio, summary
from bench.world import FixtureModel, FixtureSearch, FixtureWeb, build_shared_parts, pipeline_config
from pipeline.check import Checker
from pipeline.config import ResearchConfig
from pipeline.records import SEARCH_TIERS, Decision, LLMCall, Platform, WriterHedge
from testing.fakes.openai_server import FakeLLM, RecordedRequest, message_chars

Log = Callable[[str], None]
NOT_NEEDED = "not needed"


@dataclass(frozen=True)
class LatencyConfig:
    llm_delay_s: float = 1.5
    search_delay_s: float = 0.5
    fetch_delay_s: float = 1.0
    concurrency: int = field(default_factory=lambda: ResearchConfig().concurrency)
    post_ids: tuple[str, ...] | None = None  # None: all fixture posts
    # Whole runs (both modes, every post): a target is met only when it holds beyond the
    # run-to-run spread, so each figure is the median over runs with its lowest and highest.
    repeats: int = 3

    def scaled(self, factor: float) -> LatencyConfig:
        """The same run with every remote delay multiplied by `factor` (for quick tests)."""
        return replace(
            self,
            llm_delay_s=self.llm_delay_s * factor,
            search_delay_s=self.search_delay_s * factor,
            fetch_delay_s=self.fetch_delay_s * factor,
        )


@dataclass(frozen=True)
class CriticalPath:
    """Where one check's wall time went, read from its trace: the LLM calls are the only
    remote steps it records with their times, so the rest is searches, fetches and the
    pipeline's own compute (and waiting for the cores), which no LLM call overlapped."""

    llm_s: float  # time with at least one LLM call in flight
    other_s: float  # the rest of the wall time
    first_gap_s: float  # from the analysis' answer to the next LLM call (research's first wait)
    steps: str  # the timeline: LLM steps (overlapping ones joined by +) and the gaps between


def critical_path(calls: Sequence[LLMCall], started: datetime, wall_s: float) -> CriticalPath:
    """The check's timeline from its LLM calls' start times and latencies."""
    spans = sorted(
        ((c.started_at - started).total_seconds(), c.latency_s, c.step) for c in calls if c.ok
    )
    blocks: list[tuple[float, float, list[str]]] = []  # merged overlapping calls
    for begin, latency, step in spans:
        end = begin + latency
        if blocks and begin < blocks[-1][1]:
            first, last, steps = blocks[-1]
            blocks[-1] = (first, max(last, end), [*steps, step])
        else:
            blocks.append((begin, end, [step]))
    parts: list[str] = []
    cursor = 0.0
    gaps: list[float] = []
    for begin, end, steps in blocks:
        gaps.append(max(0.0, begin - cursor))
        if gaps[-1] >= 0.05:
            parts.append(f"~{gaps[-1]:.2f}")
        parts.append(f"{'+'.join(steps)} {end - begin:.2f}")
        cursor = end
    if wall_s - cursor >= 0.05:
        parts.append(f"~{wall_s - cursor:.2f}")
    llm = sum(end - begin for begin, end, _ in blocks)
    return CriticalPath(
        llm_s=llm,
        other_s=max(0.0, wall_s - llm),
        first_gap_s=gaps[1] if len(gaps) > 1 else 0.0,
        steps=" | ".join(parts),
    )


@dataclass
class PostRun:
    post_id: str
    scenario: str
    mode: str
    wall_s: float
    decision: Decision
    searches: int
    fetches: int
    skippable_s: float  # work MUSE's order would not have done (sequential mode only)
    path: CriticalPath | None = None
    # What the LLM server received during the check, discarded speculative calls included
    # (the trace lists only the calls whose answers came back before the decision).
    requests: int = 0
    request_prompt_tokens: int = 0

    @property
    def llm_calls(self) -> int:
        return len(self.decision.trace.llm_calls)

    def calls(self, step: str) -> int:
        return sum(1 for c in self.decision.trace.llm_calls if c.step == step)

    @property
    def outcome(self) -> str:
        verdict = self.decision.verdict.value if self.decision.verdict else "-"
        return f"{self.decision.status.value}/{verdict}"


def skippable_seconds(decision: Decision, cfg: LatencyConfig) -> float:
    """Search and fetch time spent on tiers below the one where the stop rule was met."""
    total = 0.0
    for rnd in decision.trace.rounds:
        skipped_tiers = {
            tier
            for tier in SEARCH_TIERS
            if (docs := [d for d in rnd.documents if d.tier is tier])
            and all(d.reason.startswith(NOT_NEEDED) for d in docs)
        }
        if not skipped_tiers:
            continue
        first = min(SEARCH_TIERS.index(t) for t in skipped_tiers)
        below = SEARCH_TIERS[first:]
        fetched = sum(1 for d in rnd.documents if d.tier in below)
        total += len(below) * len(rnd.queries) * cfg.search_delay_s + fetched * cfg.fetch_delay_s
    return total


def _run_post(
    checker: Checker,
    post: fixtures.FixturePost,
    mode: str,
    search: FixtureSearch,
    web: FixtureWeb,
    cfg: LatencyConfig,
    fake: FakeLLM,
) -> PostRun:
    searches, fetches, asked = search.calls, web.fetches, len(fake.requests)
    started = datetime.now(UTC)
    start = time.perf_counter()
    decision = checker.check(post.to_post(), Platform.X, as_of=fixtures.AS_OF)
    wall = time.perf_counter() - start
    received = fake.requests[asked:]
    return PostRun(
        post_id=post.id,
        scenario=post.scenario,
        mode=mode,
        wall_s=wall,
        decision=decision,
        searches=search.calls - searches,
        fetches=web.fetches - fetches,
        skippable_s=skippable_seconds(decision, cfg) if mode == "sequential" else 0.0,
        path=critical_path(decision.trace.llm_calls, started, wall),
        requests=len(received),
        request_prompt_tokens=prompt_tokens(received),
    )


def prompt_tokens(requests: Sequence[RecordedRequest]) -> int:
    """The prompt tokens the fake server reports for these requests (characters / 4)."""
    return sum(message_chars(r.messages) // 4 for r in requests)


def speculation_cost(conc: Sequence[PostRun], seq: Sequence[PostRun]) -> dict[str, float]:
    """LLM calls and prompt tokens per post beyond the one-worker run's (which never
    speculates), post by post: what speculation spent, mean and max."""
    calls = [float(c.requests - s.requests) for c, s in zip(conc, seq, strict=True)]
    tokens = [
        float(c.request_prompt_tokens - s.request_prompt_tokens)
        for c, s in zip(conc, seq, strict=True)
    ]
    discarded = [float(sum(r.discarded_calls for r in c.decision.trace.rounds)) for c in conc]
    return {
        "extra_llm_calls_mean": _mean(calls),
        "extra_llm_calls_max": max(calls, default=0.0),
        "extra_prompt_tokens_mean": _mean(tokens),
        "extra_prompt_tokens_max": max(tokens, default=0.0),
        "discarded_calls_in_trace_mean": _mean(discarded),
        "stale_drafts_mean": _mean(
            [float(sum(r.discarded_drafts for r in c.decision.trace.rounds)) for c in conc]
        ),
    }


def measure(cfg: LatencyConfig, log: Log | None = None) -> list[PostRun]:
    """Every selected post in both modes; raises if a run failed technically."""
    chosen = [p for p in fixtures.POSTS if cfg.post_ids is None or p.id in cfg.post_ids]
    model = FixtureModel()
    runs: list[PostRun] = []
    with FakeLLM(delay_s=cfg.llm_delay_s) as fake, FixtureWeb(cfg.fetch_delay_s) as web:
        model.install(fake)
        search = FixtureSearch(cfg.search_delay_s)
        built = {
            "concurrent": build_shared_parts(pipeline_config(fake, cfg.concurrency), search, web),
            "sequential": build_shared_parts(pipeline_config(fake, 1), search, web),
        }
        try:
            # First calls are slow (the model's first pass, the language detector, the HTTP
            # clients): one unmeasured check, on a shared of its own so that no cache it fills
            # serves a measured post, keeps them out of the first post's time.
            warm = build_shared_parts(pipeline_config(fake, cfg.concurrency), search, web)
            try:
                Checker(warm).check(chosen[0].to_post(), Platform.X, as_of=fixtures.AS_OF)
            finally:
                warm.close()
            for post in chosen:
                for mode, shared in built.items():
                    run = _run_post(Checker(shared), post, mode, search, web, cfg, fake)
                    if run.decision.error:
                        raise RuntimeError(f"{post.id} ({mode}) failed: {run.decision.error}")
                    runs.append(run)
                    if log:
                        log(
                            f"{post.id} {post.scenario:<17} {mode:<10} {run.wall_s:6.2f}s "
                            f"llm={run.llm_calls:<2} search={run.searches:<2} "
                            f"fetch={run.fetches:<2} sent={run.requests:<2} {run.outcome}"
                        )
                        if run.path is not None:
                            log(f"    path: {run.path.steps}")
        finally:
            for shared in built.values():
                shared.close()
    return runs


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def report(runs: list[PostRun], cfg: LatencyConfig) -> dict[str, float]:
    conc = [r for r in runs if r.mode == "concurrent"]
    seq = [r for r in runs if r.mode == "sequential"]
    c50, c95, cmean = summary([r.wall_s for r in conc])
    s50, s95, smean = summary([r.wall_s for r in seq])
    muse = [r.wall_s - r.skippable_s for r in seq]
    m50, _m95, mmean = summary(muse)
    out: dict[str, float] = {
        "posts": float(len(conc)),
        "concurrency": float(cfg.concurrency),
        "concurrent_p50_s": c50,
        "concurrent_p95_s": c95,
        "concurrent_mean_s": cmean,
        "sequential_p50_s": s50,
        "sequential_p95_s": s95,
        "sequential_mean_s": smean,
        "ratio_p50": ratio(s50, c50),
        "ratio_p95": ratio(s95, c95),
        "ratio_mean": ratio(smean, cmean),
        "muse_order_p50_s": m50,
        "muse_order_mean_s": mmean,
        "ratio_p50_vs_muse_order": ratio(m50, c50),
        "ratio_mean_vs_muse_order": ratio(mmean, cmean),
        "llm_calls_concurrent": float(sum(r.llm_calls for r in conc)),
        "llm_calls_sequential": float(sum(r.llm_calls for r in seq)),
        "same_outcome_posts": float(
            sum(1 for a, b in zip(conc, seq, strict=True) if a.outcome == b.outcome)
        ),
        "reply_posts": float(sum(1 for r in conc if r.decision.status.value == "reply")),
        "same_reply_posts": float(
            sum(
                1
                for a, b in zip(conc, seq, strict=True)
                if (a.decision.reply, a.decision.urls) == (b.decision.reply, b.decision.urls)
            )
        ),
        **speculation_cost(conc, seq),
        # Writers started beside a late re-sent call (`pipeline.research.hedged_writer`): used, or
        # dropped because the late draft fitted after all (an LLM call spent).
        "writer_hedge_used_posts": float(
            sum(1 for r in conc if r.decision.trace.writer_hedge is WriterHedge.USED)
        ),
        "writer_hedge_discarded_posts": float(
            sum(1 for r in conc if r.decision.trace.writer_hedge is WriterHedge.DISCARDED)
        ),
    }
    # Every stage the checker timed (analyze, research, write, guard, ...), in first-seen order.
    stages = list(dict.fromkeys(k for r in runs for k in r.decision.timings if k != "total"))
    for mode, group in (("concurrent", conc), ("sequential", seq)):
        out[f"{mode}_searches_per_post"] = _mean([float(r.searches) for r in group])
        out[f"{mode}_fetches_per_post"] = _mean([float(r.fetches) for r in group])
        out[f"{mode}_extractions_per_post"] = _mean([float(r.calls("evidence")) for r in group])
        out[f"{mode}_requeries_per_post"] = _mean([float(r.calls("requery")) for r in group])
        paths = [r.path for r in group if r.path is not None]
        out[f"{mode}_mean_llm_in_flight_s"] = _mean([p.llm_s for p in paths])
        out[f"{mode}_mean_no_llm_in_flight_s"] = _mean([p.other_s for p in paths])
        out[f"{mode}_mean_first_research_gap_s"] = _mean([p.first_gap_s for p in paths])
        for stage in stages:
            out[f"{mode}_mean_{stage}_s"] = _mean(
                [r.decision.timings.get(stage, 0.0) for r in group]
            )
    return out


# Figures given as median over runs, with `_min` and `_max` beside them.
SPREAD_KEYS = (
    "concurrent_p50_s",
    "concurrent_p95_s",
    "concurrent_mean_s",
    "sequential_p50_s",
    "sequential_p95_s",
    "muse_order_p50_s",
    "ratio_p50",
    "ratio_p95",
    "ratio_mean",
    "ratio_p50_vs_muse_order",
    "same_outcome_posts",
    "same_reply_posts",
    "extra_llm_calls_mean",
    "extra_prompt_tokens_mean",
)


def over_runs(reports: list[dict[str, float]]) -> dict[str, float]:
    """The first run's report, its `SPREAD_KEYS` replaced by the median over all runs and
    accompanied by the lowest (`_min`) and highest (`_max`) run."""
    out = dict(reports[0])
    out["runs"] = float(len(reports))
    for key in SPREAD_KEYS:
        values = [r[key] for r in reports if key in r]
        if not values:
            continue
        out[key] = float(statistics.median(values))
        out[f"{key}_min"] = min(values)
        out[f"{key}_max"] = max(values)
    return out


def run(cfg: LatencyConfig | None = None, log: Log | None = None) -> dict[str, float]:
    cfg = cfg or LatencyConfig()
    reports: list[dict[str, float]] = []
    for i in range(max(1, cfg.repeats)):
        reports.append(report(measure(cfg, log), cfg))
        if log:
            r = reports[-1]
            log(
                f"run {i + 1}/{cfg.repeats}: ratio p50 {r['ratio_p50']:.2f}, p95 "
                f"{r['ratio_p95']:.2f}, vs MUSE's order {r['ratio_p50_vs_muse_order']:.2f}; "
                f"extra LLM calls/post {r['extra_llm_calls_mean']:.2f} (max "
                f"{r['extra_llm_calls_max']:.0f}), extra prompt tokens/post "
                f"{r['extra_prompt_tokens_mean']:.0f} (max {r['extra_prompt_tokens_max']:.0f}); "
                f"load average {os.getloadavg()[0]:.1f}"
            )
    return over_runs(reports)
