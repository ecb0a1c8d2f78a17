"""Cost: LLM tokens per post, ours against a MUSE-style extraction of whole pages, in one run.

Ours: every fixture post goes through the real `Checker` (default settings, the fake LLM of
`bench.world` answering at once: token counts do not depend on delays). The prompt tokens are
counted on the messages the fake server actually received (system + user; the JSON schema sent
alongside is not counted, on either side), per step; completion tokens on the answers it gave.

Ours reads each passage focused on the claims (`pipeline.research.passage_focus`); one more run with
whole passages gives `whole_passages_*` and `decisions_changed_by_focus` (verdict, reply and
quotes compared post by post).

Reference (MUSE's call pattern, on the same run): the same rounds, with the same search results
(every tier, in order: High, Medium, Low; within a tier, in rank order). Every page that passes
the fetch filters MUSE also had (fetched, published before as-of, at least 100 words, dated
unless a High-tier or reference publisher) is sent to extraction as one call holding the post
and the whole page text capped at 20,000 characters, with no relevance filtering, until two
pages refute the post (MUSE's stop rule; whether a page refutes is what the scripted model says
when given the whole page). The analysis, re-query and write calls are counted as ours: the
reference differs in extraction only, plus one thing: MUSE always wrote the reply in a call of
its own, so where our extractor drafted it (no write call of ours), the reference is charged the
write call ours would have made: its prompt built from the decision's evidence and counted, its
completion the reply. The prompt wording is ours (`EVIDENCE_SYSTEM`, `evidence_user`), so the
comparison measures how much page text is sent, not prompt style (our extraction prompt also
carries the reply rules; the reference's does not). Both sides build their page blocks with
`page_block`, so a title the text opens with is left out of both.

What the fixed part weighs: `ours_instruction_tokens_*` are the system messages of our calls,
and `prompt_ratio_p50_without_instructions` is the median ratio with every system message
left out on both sides: what the material sent (posts, claims, page text, evidence, rules)
allows whatever the instructions' wording. `prompt_ratio_p50_if_one_extraction_call` is the
upper bound of reading all of a post's pages in one extraction call (`batching_headroom`).
Each post's tokens by step are logged.

Tokens are counted with the relevance model's tokenizer (`Embedder.count_tokens`, MiniLM's
WordPiece). It approximates an LLM's BPE tokenizer (English prose lands within roughly 10-20% of
it); both sides are counted the same way, so the ratio is what matters. The fake server's own
usage numbers (characters / 4) are reported too, as a cross-check.

Since this run has no remote delays at all, its wall time per post (`local_compute_wall_*`) is
reported too: the pipeline's own work (relevance model, extraction, local HTTP, guard), which
is part of every latency figure of `bench.pipeline_latency`.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bench import fixtures, ratio, summary
from bench.world import (
    FixtureModel,
    FixtureSearch,
    FixtureWeb,
    build_shared_parts,
    extraction_items,
    pipeline_config,
)
from pipeline.check import Checker
from pipeline.config import FetchConfig, ResearchConfig
from pipeline.llm.prompts import (
    EVIDENCE_SYSTEM,
    WRITE_SYSTEM,
    evidence_user,
    page_block,
    write_user,
)
from pipeline.post.describe import post_block
from pipeline.records import SEARCH_TIERS, Decision, Platform, Tier
from pipeline.reply.writer import VERDICT_WORDING, evidence_blocks, writing_rules
from pipeline.sources.credibility import PublisherTable
from pipeline.web.fetch import usability
from testing.fakes.openai_server import FakeLLM, RecordedRequest

Log = Callable[[str], None]
Counter = Callable[[str], int]
MUSE_PAGE_CHARS = 20_000
STEPS = ("analyze", "evidence", "requery", "write")
# A rewrite is the writer's second pass: its tokens count as writing.
STEP_OF = {"rewrite": "write"}


@dataclass(frozen=True)
class CostConfig:
    post_ids: tuple[str, ...] | None = None  # None: all fixture posts
    reference_page_chars: int = MUSE_PAGE_CHARS
    # Runs of the whole post set: token counts do not change between runs (checked), the local
    # compute does, so its figures are the median over runs with the spread beside them.
    repeats: int = 3
    # Also run once with whole passages (`RelevanceConfig.focus_sentences` off) and compare
    # tokens and decisions: what the focus saves and whether it changed any decision.
    compare_focus: bool = True


@dataclass
class PostCost:
    post_id: str
    prompt: dict[str, int] = field(default_factory=dict)  # ours, by step
    completion: int = 0  # ours, all steps
    instructions: int = 0  # ours: the system messages' part of `prompt`, all steps
    extraction_instructions: int = 0  # ... of the extraction calls
    reference_instructions: int = 0  # the reference's system messages, all steps
    batching_headroom: int = 0  # see `batching_headroom`
    extraction_completion: int = 0  # ours, extraction only
    server_prompt: int = 0  # the fake server's characters/4 estimate
    extraction_calls: int = 0
    wall_s: float = 0.0  # the whole check with every remote delay at zero
    # CPU seconds of this process over the check (all threads, the fake servers included):
    # less sensitive than wall time to other processes competing for the cores.
    cpu_s: float = 0.0
    reference_extraction_prompt: int = 0
    reference_extraction_completion: int = 0
    reference_extraction_calls: int = 0
    reference_write_prompt: int = 0  # the write call MUSE made where ours did not
    reference_write_completion: int = 0
    # verdict, reply and quotes: what `decisions_changed_by_focus` compares
    outcome: tuple[str, str, tuple[str, ...]] = ("", "", ())

    @property
    def prompt_total(self) -> int:
        return sum(self.prompt.values())

    @property
    def reference_prompt_total(self) -> int:
        # The reference shares every call but extraction (and an early-drafted reply) with us.
        return (
            self.prompt_total
            - self.prompt.get("evidence", 0)
            + self.reference_extraction_prompt
            + self.reference_write_prompt
        )

    @property
    def reference_completion(self) -> int:
        return (
            self.completion
            - self.extraction_completion
            + self.reference_extraction_completion
            + self.reference_write_completion
        )


_PAGE_BLOCK = re.compile(r"<page [^>]*>.*?</page>", re.S)


def batching_headroom(requests: list[RecordedRequest], count: Counter) -> int:
    """What a post's extraction calls after its first sent besides page text (instructions,
    post, claims, evidence found earlier, writing rules): the most that reading all its pages
    in one call could save. An upper bound: the calls are apart because their pages come
    from different tiers or rounds, or were not ready together."""
    calls = [r for r in requests if r.key == "evidence"][1:]
    return sum(
        prompt_tokens(r, count)
        - sum(count(m.group(0)) for m in _PAGE_BLOCK.finditer(str(r.messages[-1]["content"])))
        for r in calls
    )


def prompt_tokens(request: RecordedRequest, count: Counter) -> int:
    return sum(count(str(m.get("content") or "")) for m in request.messages)


def reference_extraction(
    post: fixtures.FixturePost,
    decision: Decision,
    count: Counter,
    publishers: PublisherTable,
    page_chars: int,
) -> tuple[int, int, int]:
    """(prompt tokens, completion tokens, calls) of MUSE-style extraction for this run."""
    analysis = decision.trace.analysis
    claims = analysis.claims if analysis else []
    block = post_block(post.to_post())
    fetch_cfg = FetchConfig()
    stop_after = ResearchConfig().stop_after_refuting_pages
    prompt = completion = calls = refuting = 0
    for rnd in decision.trace.rounds:
        for tier in SEARCH_TIERS:
            for result in (r for r in rnd.results if r.tier is tier):
                if refuting >= stop_after:
                    return prompt, completion, calls
                page = fixtures.page_by_url(result.url)
                if page is None:
                    continue
                doc = fixtures.document(result.url)
                rating = publishers.lookup(result.url)
                reason = usability(
                    doc,
                    as_of=fixtures.AS_OF,
                    replay=False,
                    reference_ok=rating.reference or tier is Tier.HIGH,
                    cfg=fetch_cfg,
                )
                if reason is not None:
                    continue
                text = doc.text[:page_chars]
                whole = page_block(1, doc.final_url or doc.url, doc.title, text)
                prompt += count(EVIDENCE_SYSTEM) + count(evidence_user(block, claims, whole))
                items = extraction_items(page, text)
                completion += count(json.dumps({"items": items}, ensure_ascii=False))
                calls += 1
                if any(item["stance"] == "refutes" for item in items):
                    refuting += 1
    return prompt, completion, calls


def reference_write(
    post: fixtures.FixturePost, decision: Decision, count: Counter
) -> tuple[int, int]:
    """(prompt tokens, completion tokens) of the write call for `decision`'s reply, with the
    evidence the writer would have been given."""
    assert decision.verdict is not None and decision.reply is not None
    user = write_user(
        post_block(post.to_post()),
        VERDICT_WORDING[decision.verdict],
        evidence_blocks(decision.evidence),
        writing_rules(decision.platform, decision.lang),
    )
    answer = json.dumps({"text": decision.reply}, ensure_ascii=False)
    return count(WRITE_SYSTEM) + count(user), count(answer)


def warm_up(post: fixtures.FixturePost) -> None:
    """One unmeasured check: first calls are slow (the model's first pass, the language
    detector), and a running bot pays them once. On servers and a shared of its own, as in
    `bench.pipeline_latency`, so that no cache it fills serves a measured post and no call
    of it still in flight is counted with one."""
    with FakeLLM() as fake, FixtureWeb(delay_s=0.0) as web:
        FixtureModel().install(fake)
        shared = build_shared_parts(pipeline_config(fake), FixtureSearch(delay_s=0.0), web)
        try:
            Checker(shared).check(post.to_post(), Platform.X, as_of=fixtures.AS_OF)
        finally:
            shared.close()


def measure(cfg: CostConfig, log: Log | None = None, *, focus: bool = True) -> list[PostCost]:
    chosen = [p for p in fixtures.POSTS if cfg.post_ids is None or p.id in cfg.post_ids]
    model = FixtureModel()
    costs: list[PostCost] = []
    with FakeLLM() as fake, FixtureWeb(delay_s=0.0) as web:
        model.install(fake)
        pipeline = pipeline_config(fake)
        if not focus:
            relevance = pipeline.relevance.model_copy(update={"focus_sentences": False})
            pipeline = pipeline.model_copy(update={"relevance": relevance})
        shared = build_shared_parts(pipeline, FixtureSearch(delay_s=0.0), web)
        count = shared.embedder.count_tokens
        try:
            for post in chosen:
                seen_requests, seen_answers = len(fake.requests), len(model.answers)
                start, cpu_start = time.perf_counter(), time.process_time()
                decision = Checker(shared).check(post.to_post(), Platform.X, as_of=fixtures.AS_OF)
                wall = time.perf_counter() - start
                cpu = time.process_time() - cpu_start
                if decision.error:
                    raise RuntimeError(f"{post.id} failed: {decision.error}")
                cost = PostCost(
                    post_id=post.id,
                    wall_s=wall,
                    cpu_s=cpu,
                    outcome=(
                        str(decision.verdict),
                        decision.reply or "",
                        tuple(sorted(e.quote for e in decision.evidence)),
                    ),
                )
                for request in fake.requests[seen_requests:]:
                    step = STEP_OF.get(request.key, request.key)
                    cost.prompt[step] = cost.prompt.get(step, 0) + prompt_tokens(request, count)
                    cost.extraction_calls += step == "evidence"
                    system = sum(
                        count(str(m.get("content") or ""))
                        for m in request.messages
                        if m.get("role") == "system"
                    )
                    cost.instructions += system
                    if step == "evidence":
                        cost.extraction_instructions += system
                cost.batching_headroom = batching_headroom(fake.requests[seen_requests:], count)
                for answer in model.answers[seen_answers:]:
                    tokens = count(answer.content)
                    cost.completion += tokens
                    if answer.key == "evidence":
                        cost.extraction_completion += tokens
                cost.server_prompt = sum(c.prompt_tokens for c in decision.trace.llm_calls)
                if "write" not in cost.prompt and decision.reply:
                    cost.reference_write_prompt, cost.reference_write_completion = reference_write(
                        post, decision, count
                    )
                (
                    cost.reference_extraction_prompt,
                    cost.reference_extraction_completion,
                    cost.reference_extraction_calls,
                ) = reference_extraction(
                    post, decision, count, shared.publishers, cfg.reference_page_chars
                )
                cost.reference_instructions = (
                    cost.instructions
                    - cost.extraction_instructions
                    + count(EVIDENCE_SYSTEM) * cost.reference_extraction_calls
                    + (count(WRITE_SYSTEM) if cost.reference_write_prompt else 0)
                )
                costs.append(cost)
                if log:
                    log(
                        f"{post.id} ours {cost.prompt_total:6d} prompt tokens "
                        f"({cost.extraction_calls} extractions), reference "
                        f"{cost.reference_prompt_total:6d} "
                        f"({cost.reference_extraction_calls} extractions); ours by step: "
                        + ", ".join(f"{step} {n}" for step, n in cost.prompt.items())
                    )
        finally:
            shared.close()
    return costs


def report(costs: list[PostCost]) -> dict[str, float]:
    ours = [float(c.prompt_total) for c in costs]
    ref = [float(c.reference_prompt_total) for c in costs]
    o50, _o95, omean = summary(ours)
    r50, _r95, rmean = summary(ref)
    ours_ext = summary([float(c.prompt.get("evidence", 0)) for c in costs])[2]
    ref_ext = summary([float(c.reference_extraction_prompt) for c in costs])[2]
    ours_calls = sum(c.extraction_calls for c in costs)
    ref_calls = sum(c.reference_extraction_calls for c in costs)
    pages = fixtures.all_pages()
    out: dict[str, float] = {
        "posts": float(len(costs)),
        "ours_prompt_tokens_mean": omean,
        "ours_prompt_tokens_p50": o50,
        "reference_prompt_tokens_mean": rmean,
        "reference_prompt_tokens_p50": r50,
        "prompt_ratio_mean": ratio(rmean, omean),
        "prompt_ratio_p50": ratio(r50, o50),
        "ours_extraction_prompt_tokens_mean": ours_ext,
        "reference_extraction_prompt_tokens_mean": ref_ext,
        "extraction_prompt_ratio": ratio(ref_ext, ours_ext),
        "ours_extraction_calls_per_post": ratio(ours_calls, len(costs)),
        "reference_extraction_calls_per_post": ratio(ref_calls, len(costs)),
        "ours_tokens_per_extraction_call": ratio(
            sum(c.prompt.get("evidence", 0) for c in costs), ours_calls
        ),
        "reference_tokens_per_extraction_call": ratio(
            sum(c.reference_extraction_prompt for c in costs), ref_calls
        ),
        # Posts whose reply our extractor drafted, and what the reference's own write call for
        # them adds to it on average over all posts.
        "early_drafted_posts": float(sum(1 for c in costs if c.reference_write_prompt)),
        "reference_write_prompt_tokens_mean": summary(
            [float(c.reference_write_prompt) for c in costs]
        )[2],
        # The fixed part: what the system messages (the instructions) take of ours.
        "ours_instruction_tokens_mean": summary([float(c.instructions) for c in costs])[2],
        "ours_instruction_tokens_p50": summary([float(c.instructions) for c in costs])[0],
        # The ratio at the median with every system message left out on both sides: what the
        # material (posts, claims, page text, evidence, rules) alone allows, whatever the
        # instructions' wording.
        "prompt_ratio_p50_without_instructions": ratio(
            summary([float(c.reference_prompt_total - c.reference_instructions) for c in costs])[0],
            summary([float(c.prompt_total - c.instructions) for c in costs])[0],
        ),
        # Upper bound of reading every page of a post in one extraction call (not done: the
        # calls wait on different tiers and rounds, so it would cost latency).
        "prompt_ratio_p50_if_one_extraction_call": ratio(
            r50, summary([float(c.prompt_total - c.batching_headroom) for c in costs])[0]
        ),
        "ours_completion_tokens_mean": summary([float(c.completion) for c in costs])[2],
        "reference_completion_tokens_mean": summary([float(c.reference_completion) for c in costs])[
            2
        ],
        "ours_prompt_tokens_server_chars4_mean": summary([float(c.server_prompt) for c in costs])[
            2
        ],
        # A by-product: with no remote latency at all, what is left is the pipeline's own work
        # (relevance model, extraction, HTTP, guard): the floor under any latency figure.
        "local_compute_wall_mean_s": summary([c.wall_s for c in costs])[2],
        "local_compute_wall_p50_s": summary([c.wall_s for c in costs])[0],
        "fixture_page_words_mean": sum(fixtures.document(p.url).word_count for p in pages)
        / len(pages),
    }
    for step in STEPS:
        out[f"ours_prompt_tokens_{step}_mean"] = summary(
            [float(c.prompt.get(step, 0)) for c in costs]
        )[2]
    return out


def focus_effect(
    focused: list[PostCost], whole: list[PostCost], log: Log | None
) -> dict[str, float]:
    """Prompt tokens with whole passages against focused ones, and the posts whose verdict,
    reply or quotes differ between the two."""
    changed = [a.post_id for a, b in zip(focused, whole, strict=True) if a.outcome != b.outcome]
    whole_p50 = summary([float(c.prompt_total) for c in whole])[0]
    ref_p50 = summary([float(c.reference_prompt_total) for c in whole])[0]
    if log:
        log(
            f"whole passages: {whole_p50:.0f} prompt tokens at the median "
            f"({ratio(ref_p50, whole_p50):.2f}x fewer than the reference); decisions changed by "
            f"the focus: {len(changed)} of {len(focused)} {changed or ''}"
        )
    return {
        "whole_passages_prompt_tokens_p50": whole_p50,
        "whole_passages_prompt_ratio_p50": ratio(ref_p50, whole_p50),
        "decisions_changed_by_focus": float(len(changed)),
    }


def local_compute(runs: list[list[PostCost]]) -> dict[str, float]:
    """Local compute per post over repeated runs: the median of the runs' means and p50s, and
    the spread (lowest and highest run mean)."""
    out: dict[str, float] = {"local_compute_runs": float(len(runs))}
    for kind in ("wall", "cpu"):
        means = [summary([getattr(c, f"{kind}_s") for c in run])[2] for run in runs]
        p50s = [summary([getattr(c, f"{kind}_s") for c in run])[0] for run in runs]
        out[f"local_compute_{kind}_mean_s"] = float(statistics.median(means))
        out[f"local_compute_{kind}_p50_s"] = float(statistics.median(p50s))
        out[f"local_compute_{kind}_mean_min_s"] = min(means)
        out[f"local_compute_{kind}_mean_max_s"] = max(means)
    return out


def run(cfg: CostConfig | None = None, log: Log | None = None) -> dict[str, float]:
    cfg = cfg or CostConfig()
    warm_up(next(p for p in fixtures.POSTS if cfg.post_ids is None or p.id in cfg.post_ids))
    runs = [measure(cfg, log if i == 0 else None) for i in range(max(1, cfg.repeats))]
    first = [(c.post_id, c.prompt, c.completion) for c in runs[0]]
    for other in runs[1:]:
        if [(c.post_id, c.prompt, c.completion) for c in other] != first:
            raise RuntimeError("token counts differ between runs of the same posts")
    out = report(runs[0])
    out.update(local_compute(runs))
    if cfg.compare_focus:
        out.update(focus_effect(runs[0], measure(cfg, focus=False), log))
    if log:
        log(
            f"local compute per post over {len(runs)} runs: mean "
            f"{out['local_compute_wall_mean_s']:.2f} s wall (runs "
            f"{out['local_compute_wall_mean_min_s']:.2f}-{out['local_compute_wall_mean_max_s']:.2f}"
            f"), {out['local_compute_cpu_mean_s']:.2f} CPU-s; load average "
            f"{os.getloadavg()[0]:.1f}"
        )
    return out
