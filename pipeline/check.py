"""One post in, one decision out: the whole correction pipeline in order.

describe → analyse → known claims → research rounds (authorities, then search, fetch,
relevance, evidence) → verdict → write → guard (→ rewrite ≤ N) → decision. With an LLM, the
head start (`pipeline.research.head_start`) searches the post's own words beside the first two
steps. Every outcome is a `Decision`: a reply, an abstention with its reasons, `needs_llm` when no
endpoint is configured, or `failed` when something technical broke (with the trace gathered up
to that point). Nothing here posts anything.

Known claims: the post's claims (the post itself without an LLM) are matched against the claim
index. A strong, recent match to a false or misleading rating is evidence (`source` fact_check),
placed first. Every other match is listed in the decision's reasons as a suggestion for
moderators. Without an LLM, such a strong match lets the bot reply with a fixed template citing
the fact-check (its confidence derived from the match score, see `claims.match_confidence`),
if the guard accepts it; everything else without an LLM ends as `needs_llm`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from pipeline.claims.index import (
    ClaimMatch,
    fact_check_evidence,
    usable_as_evidence,
    verdict_for,
)
from pipeline.claims.known import find_known_claims
from pipeline.claims.replies import templated_reply
from pipeline.context import CheckContext
from pipeline.failures import PipelineFailure
from pipeline.images.reader import ImageReader, merge_matches, unreadable_only
from pipeline.learning.memory import Phase, Recall
from pipeline.llm.client import CallLedger
from pipeline.post.analyze import analyze, fallback_analysis
from pipeline.post.describe import cap_post, detect_language
from pipeline.records import (
    ClaimAnalysis,
    Decision,
    DecisionStatus,
    Document,
    Evidence,
    Passage,
    Platform,
    Post,
    Trace,
    Verdict,
    utcnow,
)
from pipeline.reply import guard
from pipeline.reply.writer import draft_reply, writer_order
from pipeline.research.head_start import HeadStart, start_head_start
from pipeline.research.hedged_writer import FirstDraft, first_draft
from pipeline.research.page_prep import PagePreparer
from pipeline.research.rounds import Research, ResearchOutcome
from pipeline.research.scheduler import ResearchScheduler, tiered_search
from pipeline.shared_parts import SharedParts
from pipeline.video.reader import VideoReader, video_unreadable_only
from pipeline.web.deadline import Deadline, DeadlineExceeded, within

REPLY_VERDICTS = (Verdict.REFUTED, Verdict.MISLEADING, Verdict.SUPPORTED)


def _unread_videos(post: Post) -> bool:
    owners = [post] + ([post.quoted] if post.quoted else [])
    return any(not video.description for owner in owners for video in owner.videos)


def _undescribed_images(post: Post) -> bool:
    owners = [post] + ([post.quoted] if post.quoted else [])
    return any(not image.description for owner in owners for image in owner.images)


class Checker:
    def __init__(self, shared: SharedParts, *, deadline_s: float | None = None) -> None:
        self.shared = shared
        # One check's total time (the bot's `runtime.check_deadline_s`); None: no limit.
        self.deadline_s = deadline_s

    def check(
        self,
        post: Post,
        platform: Platform = Platform.X,
        *,
        as_of: datetime | None = None,
        replay: bool = False,
    ) -> Decision:
        """Run the pipeline on `post`.

        `as_of` is the time sources must predate: the decision time by default (a live bot may
        cite a debunk published after the post); evaluation and replay pass the post's time
        with `replay=True`, as MUSE did.
        """
        deadline = Deadline(self.deadline_s, "check") if self.deadline_s else None
        when = as_of or utcnow()
        if deadline is None:
            return _Run(self.shared, post, platform, when, replay).execute()
        # The run ends itself at its next stage or remote call once the deadline passes; the
        # watchdog answers on time even if what the run waits on (or its set-up) has not ended.
        runs: list[_Run] = []

        def execute() -> Decision:
            runs.append(_Run(self.shared, post, platform, when, replay, deadline))
            return runs[0].execute()

        def overrun() -> DeadlineExceeded:
            stage = runs[0].stage if runs else "start"
            return DeadlineExceeded(deadline.message(stage), stage=stage)

        try:
            return within(execute, deadline, overrun, name="check")
        except DeadlineExceeded as exc:
            return _overrun_decision(exc, runs[0] if runs else None, platform, when, deadline)


class _Run:
    def __init__(
        self,
        shared: SharedParts,
        post: Post,
        platform: Platform,
        as_of: datetime,
        replay: bool,
        deadline: Deadline | None = None,
    ) -> None:
        self.shared = shared
        self.deadline = deadline
        self.stage = "start"  # the stage running now, named when the deadline passes
        # A copy (image descriptions are filled in), cut to the prompt limits: every stage
        # reads this one, so no prompt carries more of the post than `llm.max_post_chars`.
        capped, cuts = cap_post(post.model_copy(deep=True), shared.cfg.llm)
        self.ctx = CheckContext(
            post=capped,
            platform=platform,
            as_of=as_of,
            replay=replay,
            lang=detect_language(capped),
            use_llm=shared.llm.configured,
            ledger=CallLedger(deadline),
        )
        self.trace = Trace()
        self.timings: dict[str, float] = {}
        # Known-claim matches not used as evidence: shown to moderators with every decision.
        self.suggestions: list[str] = []
        self.notes: list[str] = cuts  # things worth knowing that did not stop the run
        self.head_start: HeadStart | None = None
        self.preparer = PagePreparer(shared, self.ctx)
        self.recall = Recall(shared.memory, shared.cfg.memory)  # experience memory, per phase
        self._writing_memory: str | None = None
        self.scheduler = ResearchScheduler(
            tiered_search(shared), self.preparer.prepare, shared.cfg.research
        )

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        self.stage = stage
        if self.deadline is not None and self.deadline.expired():
            raise self.overrun()
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = round(
                self.timings.get(stage, 0.0) + time.perf_counter() - start, 4
            )

    def decision(
        self,
        status: DecisionStatus,
        *,
        reasons: Sequence[str] = (),
        verdict: Verdict | None = None,
        confidence: float = 0.0,
        reply: str | None = None,
        urls: Sequence[str] = (),
        evidence: Sequence[Evidence] = (),
        documents: Sequence[Document] = (),
        candidates: Sequence[Passage] = (),
        error: str | None = None,
    ) -> Decision:
        self.trace.llm_calls = list(self.ctx.ledger.calls)
        self.trace.memory = list(self.recall.used)
        return Decision(
            status=status,
            platform=self.ctx.platform,
            as_of=self.ctx.as_of,
            lang=self.ctx.lang,
            trace=self.trace,
            timings=self.timings,
            reasons=[*reasons, *self.suggestions, *self.notes],
            verdict=verdict,
            confidence=confidence,
            reply=reply,
            urls=list(urls),
            evidence=list(evidence),
            documents=list(documents),
            candidates=list(candidates),
            error=error,
        )

    def researched(
        self,
        status: DecisionStatus,
        outcome: ResearchOutcome,
        *,
        reasons: Sequence[str],
        reply: str | None = None,
        urls: Sequence[str] = (),
    ) -> Decision:
        """A decision on researched evidence: the vote's verdict and confidence, the evidence
        and the pages it came from."""
        return self.decision(
            status,
            reasons=reasons,
            verdict=outcome.assessment.verdict,
            confidence=outcome.assessment.confidence,
            reply=reply,
            urls=urls,
            evidence=outcome.evidence,
            documents=outcome.documents,
        )

    def execute(self) -> Decision:
        start = time.perf_counter()
        try:
            decision = self._execute()
        except PipelineFailure as exc:
            # A technical failure is a failure: recorded with its cause, never an abstention.
            decision = self.decision(
                DecisionStatus.FAILED,
                error=f"{type(exc).__name__} in {exc.stage}: {exc}",
                reasons=[f"technical failure in {exc.stage}"],
            )
        decision.timings["total"] = round(time.perf_counter() - start, 4)
        return decision

    def overrun(self) -> DeadlineExceeded:
        assert self.deadline is not None
        return DeadlineExceeded(self.deadline.message(self.stage), stage=self.stage)

    def _execute(self) -> Decision:
        if self.ctx.use_llm and self.shared.cfg.research.head_start:
            # Search the post's own words while the LLM analyses it (see
            # pipeline.research.head_start).
            with self.timed("head_start"):
                self.head_start = start_head_start(
                    self.scheduler, self.ctx.post, self.shared.cfg.search
                )
        try:
            return self._checked()
        finally:
            self.scheduler.close()

    def _read_media(self) -> tuple[list[ClaimMatch], Decision | None]:
        """Read the post's videos and images as text, in place: the known-claim matches their
        pictures gave, and the abstention when they were its only content and unreadable."""
        ctx = self.ctx
        matches: list[ClaimMatch] = []
        if not self.shared.cfg.video.enabled:
            for video in ctx.post.videos:
                video.description = video.description or "video not analysed (video reading off)"
        elif _unread_videos(ctx.post):
            with self.timed("video"):
                videos = VideoReader.from_shared(self.shared).read_post(ctx.post, ctx.as_of)
            self.trace.videos, matches = videos.reports, videos.claim_matches
            self.notes.extend([*videos.problems, *videos.notes])
            # A keyframe that is a fact-checked picture is content enough, text or not.
            unreadable = None if matches else video_unreadable_only(ctx.post, videos.reports)
            if unreadable is not None:
                return matches, self._unreadable(unreadable)
        if _undescribed_images(ctx.post):
            with self.timed("describe"):
                images = ImageReader.from_shared(self.shared).read_post(
                    ctx.post, ctx.ledger, ctx.as_of
                )
            self.trace.images = images.reports
            matches = [*matches, *images.claim_matches]
            self.notes.extend([*images.problems, *images.notes])
            read_video = any(video.text for video in ctx.post.videos)
            unreadable = None if read_video else unreadable_only(ctx.post, images.reports)
            if unreadable is not None:
                return matches, self._unreadable(unreadable)
        return matches, None

    def _unreadable(self, why: str) -> Decision:
        return self.decision(
            DecisionStatus.ABSTAIN, verdict=Verdict.NOT_CHECKABLE, reasons=[f"not checkable: {why}"]
        )

    def _checked(self) -> Decision:
        ctx = self.ctx
        image_matches, unreadable = self._read_media()
        if unreadable is not None:
            return unreadable
        with self.timed("analyze"):
            if ctx.use_llm:
                # The analysis writes the queries too, so search lessons guide it as well.
                guidance = self.recall.guidance((Phase.ANALYSIS, Phase.SEARCH), ctx.post.text)
                analysis = analyze(ctx, self.shared.llm, guidance)
            else:
                analysis = fallback_analysis(ctx.post)
        self.trace.analysis = analysis
        if not analysis.checkable:
            return self.decision(
                DecisionStatus.ABSTAIN,
                verdict=Verdict.NOT_CHECKABLE,
                reasons=[f"not checkable: {analysis.reason or 'no factual claim'}"],
            )

        with self.timed("known_claims"):
            matches = merge_matches(
                self._known_claims(analysis), image_matches, self.shared.cfg.claims.max_matches
            )
        usable = [m for m in matches if usable_as_evidence(m)]
        self.suggestions = [_suggestion(m) for m in matches if not usable_as_evidence(m)]
        fact_checks = [e for e in (self._fact_check(m) for m in usable) if e is not None]
        if not ctx.use_llm and usable:
            templated = self._templated(usable[0])
            if templated is not None:
                return templated

        with self.timed("research"):
            outcome = self._research(analysis, fact_checks)
        self.trace.rounds = outcome.rounds
        if not ctx.use_llm:
            return self._needs_llm(outcome)
        # Fact-checks first: the writer leans on the first items (order_evidence sorted them
        # among the web evidence by tier and relevance only).
        outcome.evidence = writer_order(outcome.evidence)

        verdict = outcome.assessment.verdict
        if verdict not in REPLY_VERDICTS:
            return self.researched(
                DecisionStatus.ABSTAIN,
                outcome,
                reasons=[f"{verdict.value}: {outcome.assessment.explanation}"],
            )
        return self._write_and_guard(outcome)

    def _research(self, analysis: ClaimAnalysis, prior: list[Evidence]) -> ResearchOutcome:
        research = Research(
            self.shared,
            self.ctx,
            analysis,
            self.scheduler,
            self.preparer,
            prior=prior,
            head_start=self.head_start,
        )
        return research.run()

    # -- known claims ---------------------------------------------------------------------------

    def _known_claims(self, analysis: ClaimAnalysis) -> list[ClaimMatch]:
        """Matches of the post's claims (and the post itself) in the claim index, best first,
        one per stored review."""
        index = self.shared.claim_index
        # An empty index (the bot's database before any import) must cost nothing: no
        # embedding, no translation call.
        if index is None or len(index) == 0:
            return []
        known = find_known_claims(
            index,
            [*analysis.claims, self.ctx.post.text],
            lang=self.ctx.lang,
            as_of=self.ctx.as_of,
            llm=self.shared.llm if self.ctx.use_llm else None,
            ledger=self.ctx.ledger,
        )
        self.notes.extend(known.notes)
        return known.matches

    def _fact_check(self, match: ClaimMatch) -> Evidence | None:
        index = self.shared.claim_index
        # An image match needs no claim index (pipeline.images.reader); its thresholds still apply.
        claims_cfg = index.cfg if index is not None else self.shared.cfg.claims
        return fact_check_evidence(
            match,
            self.shared.publishers,
            min_confidence=self.shared.cfg.guard.min_confidence,
            strong=claims_cfg.strong_threshold,
        )

    def _templated(self, match: ClaimMatch) -> Decision | None:
        """Without an LLM: the templated reply for a strong match, if the guard accepts it."""
        item = self._fact_check(match)
        if item is None:
            return None
        verdict = verdict_for(match)
        text = templated_reply(match, self.ctx.platform, self.shared.cfg.guard, self.ctx.lang)
        self.trace.drafts.append(text)
        with self.timed("guard"):
            report = guard.check_decision(
                text,
                self.ctx.platform,
                evidence=[item],
                verdict=verdict,
                confidence=item.confidence,
                cfg=self.shared.cfg.guard,
                post_text=self.ctx.post.text,
            )
        self.trace.guard.append(report)
        if not report.valid:
            self.suggestions.insert(0, _suggestion(match))
            self.suggestions.append(
                "templated reply refused: " + "; ".join(map(str, report.problems))
            )
            return None
        record = match.record
        return self.decision(
            DecisionStatus.REPLY,
            verdict=verdict,
            confidence=item.confidence,
            reply=text,
            urls=report.urls,
            evidence=[item],
            reasons=[
                f"known claim: {record.publisher_name or item.domain} rated a matching claim "
                f"{record.rating_text or record.rating.value!r} (match score {match.score:.2f}); "
                "templated reply, no LLM configured"
            ],
        )

    def _writing_guidance(self) -> str:
        """Writing-phase memory, retrieved once per check: rewrites see the same items."""
        if self._writing_memory is None:
            claims = self.trace.analysis.claims if self.trace.analysis else []
            query = " ".join([self.ctx.post.text, *claims])
            self._writing_memory = self.recall.guidance((Phase.WRITING,), query)
        return self._writing_memory

    def _needs_llm(self, outcome: ResearchOutcome) -> Decision:
        found = len(outcome.candidates)
        return self.decision(
            DecisionStatus.NEEDS_LLM,
            reasons=[
                "no LLM endpoint configured: claim analysis, evidence extraction and writing "
                "need one (set FACTNOTE_LLM_BASE_URL and FACTNOTE_LLM_MODEL)",
                f"retrieval without an LLM found {found} relevant passage(s)",
            ],
            candidates=outcome.candidates,
        )

    def _draft(
        self,
        outcome: ResearchOutcome,
        guidance: str,
        feedback: str | None = None,
        previous: str | None = None,
    ) -> str:
        return draft_reply(
            self.ctx,
            self.shared.llm,
            verdict=outcome.assessment.verdict,
            evidence=outcome.evidence,
            feedback=feedback,
            previous=previous,
            guidance=guidance,
        )

    def _first_draft(self, outcome: ResearchOutcome) -> FirstDraft:
        """The extractor's draft if one fits, else the writer's
        (`pipeline.research.hedged_writer`)."""
        write_s: list[float] = []

        def writer() -> Callable[[], str]:
            guidance = self._writing_guidance()  # on this thread: it records what it shows

            def write() -> str:
                # Maybe on a thread of its own: its time is added to the timings only if its
                # draft is used, as a dropped one may still be running.
                start = time.perf_counter()
                text = self._draft(outcome, guidance)
                write_s.append(time.perf_counter() - start)
                return text

            return write

        first = first_draft(
            outcome.drafts,
            outcome.late_drafts,
            outcome.assessment.verdict,
            outcome.evidence,
            writer,
            hedge=self.shared.cfg.research.hedge_writer,
        )
        self.trace.writer_hedge = first.hedge
        if not first.early:
            self.timings["write"] = round(self.timings.get("write", 0.0) + sum(write_s), 4)
        return first

    def _write_and_guard(self, outcome: ResearchOutcome) -> Decision:
        verdict = outcome.assessment.verdict
        feedback: str | None = None
        text: str | None = None
        report = None
        notes: list[str] = []
        first = self._first_draft(outcome)
        for _attempt in range(1 + self.shared.cfg.guard.max_rewrites):
            if text is None:
                text = first.text
                if first.early:
                    # Written by the extraction call from the very evidence the writer gets.
                    notes = ["reply drafted by the evidence extraction call (no writing call)"]
            else:
                with self.timed("write"):
                    text = self._draft(outcome, self._writing_guidance(), feedback, text)
                notes = []
            self.trace.drafts.append(text)
            with self.timed("guard"):
                report = guard.check_decision(
                    text,
                    self.ctx.platform,
                    evidence=outcome.evidence,
                    verdict=verdict,
                    confidence=outcome.assessment.confidence,
                    cfg=self.shared.cfg.guard,
                    post_text=self.ctx.post.text,
                )
            self.trace.guard.append(report)
            if report.valid:
                return self.researched(
                    DecisionStatus.REPLY,
                    outcome,
                    reply=text,
                    urls=report.urls,
                    reasons=[outcome.assessment.explanation, *notes],
                )
            if not all(p.code.rewritable for p in report.problems):
                break
            feedback = "; ".join(map(str, report.problems))
        assert report is not None
        return self.researched(
            DecisionStatus.ABSTAIN,
            outcome,
            reasons=[f"guard: {p}" for p in report.problems],
        )


def _overrun_decision(
    exc: DeadlineExceeded,
    run: _Run | None,
    platform: Platform,
    as_of: datetime,
    deadline: Deadline,
) -> Decision:
    """The failed decision the watchdog gives while the run may still be going: its LLM calls
    so far, and nothing read from the trace the run is still writing."""
    return Decision(
        status=DecisionStatus.FAILED,
        platform=platform,
        as_of=as_of,
        lang=run.ctx.lang if run is not None else None,
        trace=Trace(llm_calls=run.ctx.ledger.calls if run is not None else []),
        timings={"total": round(deadline.seconds - deadline.remaining(), 4)},
        reasons=[f"technical failure in {exc.stage}"],
        error=f"{type(exc).__name__} in {exc.stage}: {exc}",
    )


def _suggestion(match: ClaimMatch) -> str:
    record = match.record
    notes = [f"{match.strength.value} match", f"rated {record.rating.value}"]
    if match.possibly_outdated:
        notes.append("possibly outdated")
    notes.extend(match.demoted)  # why a strong-scoring match was not used
    return (
        f"suggested fact-check: {record.review_url} (score {match.score:.2f}; {', '.join(notes)})"
    )
