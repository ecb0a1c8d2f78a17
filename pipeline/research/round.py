"""One research round's pages, extraction calls and stop rule, in MUSE's order or ahead of it.

The round's pages come as sources, in trace order: per tier, the head start's (already fetched
and encoded, scored here) and then the round's own searches'. After each source MUSE's order
asks whether the extraction calls in flight could meet the stop rule; if so it waits for them,
and stops the round when they do. `RoundRunner` keeps exactly those checks, in that order, but
does not sit idle while it waits: the next sources whose pages are ready (up to
`speculate_tiers` tiers below) are planned and sent to the extractor speculatively. If the
stop rule is met above them, their calls are discarded (cancelled if not sent yet, their
answers never read) and their pages are recorded as such; if not, their answers are what MUSE's
order would have asked for at that point, except for one thing: the draft a call writes along
with its quotes rests on the evidence shown to it, and a speculative call is shown less than
its in-order call would have been. Such a draft is not kept (counted as discarded); as soon as
what its in-order call would have been shown is known (`research.redraft_stale`), that in-order
call is sent again, and its draft takes the stale one's place in call order (its quotes are
not used: the evidence stays the first answer's, already counted for the stop rule). The
writer drafts only if that draft does not fit either (maybe beside it:
`pipeline.research.hedged_writer`).

The decisions are `pipeline.research.plan`'s; the pages and calls run on the caller's workers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from dataclasses import dataclass, field, replace
from typing import Any

from pipeline.config import ResearchConfig
from pipeline.records import SEARCH_TIERS, EarlyDraft, Evidence, SearchResult, Tier, Verdict
from pipeline.reply.verdict import order_evidence
from pipeline.reply.writer import MAX_EVIDENCE_IN_PROMPT, evidence_key, writer_order
from pipeline.research.page_outcome import PageOutcome, PageReason
from pipeline.research.plan import (
    discarded,
    not_needed,
    plan_tier,
    set_aside_known,
    stop_rule,
    worth_speculating,
    worth_waiting,
)
from pipeline.research.scheduler import TierPages, finished
from pipeline.search.base import SearchError


@dataclass(frozen=True)
class Extracted:
    """One extraction call's answer: per page its evidence and the quotes it dropped."""

    pages: list[tuple[list[Evidence], str]]
    draft: EarlyDraft | None
    order: int  # calls are numbered as started, not as finished


@dataclass(frozen=True)
class LateDraft:
    """A call sent again, in order, for a stale draft's place (see the module doc)."""

    order: int  # the call order of the draft it stands in for
    call: Future[Extracted]
    # The verdict the stale draft had written from less evidence (None: it wrote none): what
    # the call sent again is likely to write (`pipeline.research.hedged_writer`).
    stale_verdict: Verdict | None = None

    def draft(self) -> EarlyDraft | None:
        """Its draft, once its answer is in (an LLM failure is raised, as any call's); none
        if it was cancelled before it was sent."""
        try:
            return self.call.result().draft
        except CancelledError:
            return None


# Sends pages to the extractor with the evidence shown for its draft; the call runs elsewhere.
SendFn = Callable[[list[PageOutcome], list[Evidence]], Future[Extracted]]


@dataclass(frozen=True)
class Source:
    """One batch of a round's pages."""

    tier: Tier
    pages: Future[TierPages]
    early: bool  # the head start's: fetched and encoded already, scored here


@dataclass(frozen=True)
class _InFlight:
    slots: list[int]  # where its pages stand in the round's outcomes
    call: Future[Extracted]
    known: tuple[str, ...] = ()  # the evidence shown to it for its draft (`evidence_key`)
    # What its in-order call would have been shown, once that is known (set for calls sent
    # while earlier ones that could meet the stop rule were in flight).
    expected: tuple[str, ...] | None = None
    expected_items: tuple[Evidence, ...] = ()  # the evidence behind `expected`
    redo: Future[Extracted] | None = None  # the in-order call, sent again for its draft

    @property
    def stale(self) -> bool:
        """Its draft rests on less evidence than its in-order call's would have."""
        return self.expected is not None and self.expected != self.known


@dataclass(frozen=True)
class _Mark:
    """A source taken: its tier, and how many calls (in `pending`) and pages (in `outcomes`)
    stand up to and including it."""

    tier: Tier
    calls: int
    pages: int


@dataclass
class RoundState:
    """What one round has so far: its pages' outcomes in trace order, evidence for the stop
    rule, extractions in flight, and whether the stop rule was met."""

    have: list[Evidence]
    outcomes: list[PageOutcome] = field(default_factory=list)
    results: list[SearchResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    found: list[tuple[PageOutcome, list[Evidence]]] = field(default_factory=list)
    drafts: list[tuple[int, EarlyDraft]] = field(default_factory=list)
    pending: list[_InFlight] = field(default_factory=list)
    # Sources taken whose stop-rule check is still to come, in order.
    marks: list[_Mark] = field(default_factory=list)
    stopped: bool = False
    failed_tiers: int = 0
    slots: dict[Tier, int] = field(default_factory=dict)  # extraction slots left per tier
    head_failed: dict[Tier, bool] = field(default_factory=dict)
    speculative_calls: int = 0  # sent while calls that could meet the stop rule were out
    discarded_calls: int = 0  # of those, the ones whose answers were not used
    stale_drafts: int = 0  # drafts not kept: written from less than MUSE's order shows
    redraft_calls: int = 0  # in-order calls sent again for a stale draft's place
    # Those calls, by the call order of the draft they stand in for; read when the round ends.
    redrafts: list[LateDraft] = field(default_factory=list)

    def add(self, pages: Sequence[PageOutcome]) -> list[int]:
        """Append pages to the trace order; their positions."""
        start = len(self.outcomes)
        self.outcomes.extend(pages)
        return list(range(start, len(self.outcomes)))

    def settle(self, count: int) -> None:
        """Wait for the first `count` extractions in flight and take in what they found."""
        for flight in self.pending[:count]:
            extracted = flight.call.result()
            if extracted.draft is not None and flight.stale:
                self.stale_drafts += 1
            if flight.stale and flight.redo is not None:
                stale = extracted.draft.verdict if extracted.draft is not None else None
                self.redrafts.append(LateDraft(extracted.order, flight.redo, stale))
            elif extracted.draft is not None and not flight.stale:
                self.drafts.append((extracted.order, extracted.draft))
            for slot, (items, rejected) in zip(flight.slots, extracted.pages, strict=True):
                page = self.outcomes[slot]
                if rejected:
                    page = replace(page, detail=rejected)
                    self.outcomes[slot] = page
                self.have.extend(items)
                self.found.append((page, items))
        self.pending = self.pending[count:]
        self.marks = [replace(mark, calls=mark.calls - count) for mark in self.marks]

    def settle_all(self, *, redrafts: bool = True) -> None:
        """Wait for every extraction in flight and take in what it found, then (`redrafts`)
        for the calls sent again for their drafts; without it those stay in `redrafts`."""
        self.settle(len(self.pending))
        if not redrafts:
            return
        for late in self.redrafts:
            draft = late.draft()
            if draft is not None:
                self.drafts.append((late.order, draft))
        self.redrafts = []

    def discard_from(self, first_page: int) -> None:
        """The stop rule was met: the calls still in flight were speculative, and the pages
        taken after `first_page` are not needed; their answers never reach the evidence."""
        sent = {slot for flight in self.pending for slot in flight.slots}
        for flight in self.pending:
            flight.call.cancel()  # not started yet: never sent
            if flight.redo is not None:
                flight.redo.cancel()
        self.discarded_calls += len(self.pending)
        for slot in range(first_page, len(self.outcomes)):
            self.outcomes[slot] = discarded(self.outcomes[slot], extracted=slot in sent)
        self.pending = []
        self.marks = []


class RoundRunner:
    """Runs one round's sources. `score` rates a head-start page against the claims, `send`
    starts an extraction call (None: no LLM, the chosen pages are kept as candidates), and
    `on_stop` is told when the stop rule is met (pages still loading are not wanted).
    `send_again` sends a call again for a stale draft's place (default: `send`). With
    `leave_redrafts` the round ends without waiting for those calls: they are left in
    `RoundState.redrafts` for the caller (`pipeline.research.hedged_writer`)."""

    def __init__(
        self,
        cfg: ResearchConfig,
        *,
        score: Callable[[PageOutcome], PageOutcome],
        send: SendFn | None,
        on_stop: Callable[[], None],
        known_urls: frozenset[str] = frozenset(),
        speculate_tiers: int | None = None,
        leave_redrafts: bool = False,
        send_again: SendFn | None = None,
    ) -> None:
        self.cfg = cfg
        self._leave_redrafts = leave_redrafts
        self._score = score
        self._send = send
        self._send_again = send_again or send
        self._on_stop = on_stop
        self._known_urls = known_urls
        if speculate_tiers is not None:
            self.cfg = cfg.model_copy(update={"speculate_tiers": speculate_tiers})
        self._ahead = self.cfg.speculate_tiers

    def run(self, sources: Sequence[Source], prior: Sequence[Evidence], number: int) -> RoundState:
        state = RoundState(have=list(prior))
        queue = deque(sources)
        while queue and not state.stopped:
            self._take(queue.popleft(), state, speculative=False)
            self._check(state, queue)
        for left in queue:
            _record_unneeded(state, left.tier, left.pages)
        if state.failed_tiers == len(SEARCH_TIERS):
            raise SearchError(f"every search failed in round {number}: {state.errors}")
        state.settle_all(redrafts=not self._leave_redrafts)
        return state

    def _take(self, source: Source, state: RoundState, *, speculative: bool) -> None:
        """Put a source's pages in the trace and send its tier's best to the extractor."""
        gathered = source.pages.result()
        state.results.extend(gathered.results)
        state.errors.extend(gathered.errors)
        if source.early:
            state.head_failed[source.tier] = gathered.failed
            ready = [self._score(p.result()) for p in gathered.pages]
            ready = [set_aside_known(p, self._known_urls) for p in ready]
        else:
            state.failed_tiers += state.head_failed.get(source.tier, True) and gathered.failed
            ready = [p.result() for p in gathered.pages]
        slots = state.slots.get(source.tier, self.cfg.max_extractions_per_tier)
        plan = plan_tier(ready, slots, self.cfg)
        positions = state.add(plan.pages)
        chosen = [positions[i] for i in plan.extract]
        state.slots[source.tier] = slots - len(chosen)
        if self._send is None:
            state.found.extend((state.outcomes[slot], []) for slot in chosen)
        else:
            # What the writer would see of the evidence settled so far (its first items can
            # only come from these), for a draft written along with the quotes.
            known = _known(state)
            keys = tuple(evidence_key(item) for item in known)
            size = max(1, self.cfg.pages_per_extraction)
            for start in range(0, len(chosen), size):
                batch = chosen[start : start + size]
                call = self._send([state.outcomes[slot] for slot in batch], known)
                state.pending.append(_InFlight(batch, call, keys))
                state.speculative_calls += speculative
        state.marks.append(_Mark(source.tier, len(state.pending), len(state.outcomes)))

    def _check(self, state: RoundState, queue: deque[Source]) -> None:
        """MUSE's order: after each source, wait for the extractions in flight only if they
        could meet the stop rule (otherwise the next source is needed anyway, and starts now).
        While waiting, ready sources below are taken speculatively; their own checks follow
        in order, and they are discarded if the stop rule is met above them."""
        while state.marks and not state.stopped:
            mark = state.marks.pop(0)
            self._redraft(state, mark.calls)
            waited = state.pending[: mark.calls]
            if not worth_waiting(state.have, sum(len(f.slots) for f in waited), self.cfg):
                continue
            if worth_speculating(state.have, sum(len(f.slots) for f in waited), self.cfg):
                self._look_ahead(state, queue, waited, mark.tier)
            state.settle(mark.calls)
            if stop_rule(state.have, self.cfg):
                state.stopped = True
                self._on_stop()
                state.discard_from(mark.pages)
                return
            # The calls sent meanwhile would have been shown this in MUSE's order.
            shown = tuple(_known(state))
            expected = tuple(evidence_key(item) for item in shown)
            state.pending = [
                replace(f, expected=expected, expected_items=shown) for f in state.pending
            ]

    def _redraft(self, state: RoundState, count: int) -> None:
        """The checks before these calls' own are done, so what their in-order calls would
        have been shown is final: a call whose draft rests on less is sent again now, in order,
        rather than leave the writer to draft after the round."""
        resend = self._send_again
        if resend is None or not (self.cfg.redraft_stale and self.cfg.draft_with_evidence):
            return
        for i, flight in enumerate(state.pending[:count]):
            if flight.stale and flight.redo is None:
                pages = [state.outcomes[slot] for slot in flight.slots]
                redo = resend(pages, list(flight.expected_items))
                state.pending[i] = replace(flight, redo=redo)
                state.redraft_calls += 1

    def _look_ahead(
        self, state: RoundState, queue: deque[Source], waited: list[_InFlight], tier: Tier
    ) -> None:
        """Until the calls waited for (on `tier`'s pages) are in, take each next source within
        `speculate_tiers` tiers below as soon as its pages are ready."""
        calls = [flight.call for flight in waited]
        reach = SEARCH_TIERS.index(tier) + self._ahead
        while self._ahead > 0 and queue and not all(call.done() for call in calls):
            if SEARCH_TIERS.index(queue[0].tier) > reach:
                return
            unready = _unready(queue[0])
            if unready is None:
                return  # its search failed: not taken before it is certainly needed
            if unready:
                wait([*calls, *unready], return_when=FIRST_COMPLETED)
                continue
            self._take(queue.popleft(), state, speculative=True)


def _known(state: RoundState) -> list[Evidence]:
    return writer_order(order_evidence(state.have))[:MAX_EVIDENCE_IN_PROMPT]


def _unready(source: Source) -> list[Future[Any]] | None:
    """What a source still waits for (empty: ready to take); None if its search failed."""
    if not source.pages.done():
        return [source.pages]
    if source.pages.exception() is not None:
        return None
    return [page for page in source.pages.result().pages if not page.done()]


def _record_unneeded(state: RoundState, tier: Tier, source: Future[TierPages] | None) -> None:
    """Put a source the stop rule made unnecessary in the trace, without waiting for it."""
    gathered = finished(source)
    if gathered is None:
        return
    state.results.extend(gathered.results)
    for result, fut in zip(gathered.results, gathered.pages, strict=True):
        page = finished(fut)
        state.add(
            [
                not_needed(page)
                if page is not None
                else PageOutcome(result, tier, PageReason.NOT_FETCHED)
            ]
        )
