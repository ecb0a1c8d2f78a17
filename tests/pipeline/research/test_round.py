"""One research round's order: MUSE's stop-rule checks, and the speculative extraction of lower
tiers while the calls above them are in flight. The far side is the extraction call (`send`),
played by `FakeExtractor` in the shape of `Research._extract`'s answer (`Extracted`: per page
its evidence and rejected quotes, and the draft); the pages arrive already prepared and scored,
so no web, no LLM and no embedding model."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from pipeline.config import ResearchConfig
from pipeline.records import EarlyDraft, Evidence, SearchResult, Stance, Tier, Verdict
from pipeline.research.evidence_extraction import evidence_key
from pipeline.research.page_outcome import PageOutcome, PageReason
from pipeline.research.plan import SPECULATION_DISCARDED
from pipeline.research.round import Extracted, RoundRunner, RoundState, Source
from pipeline.research.scheduler import TierPages
from testing.builders import evidence

H, M, L = Tier.HIGH, Tier.MEDIUM, Tier.LOW


def done(value: object) -> Future[object]:
    future: Future[object] = Future()
    future.set_result(value)
    return future


def source(tier: Tier, *urls: str) -> Source:
    """A tier's pages, searched, fetched and scored relevant already."""
    results = tuple(SearchResult(url=u, provider="fake", query="q", rank=1) for u in urls)
    pages = tuple(done(PageOutcome(r, tier, PageReason.KEPT, relevance=0.9)) for r in results)
    return Source(tier, done(TierPages(results, pages=pages)), early=False)  # type: ignore[arg-type]


class FakeExtractor:
    """Answers an extraction call with one quote per page whose stance it was given, once the
    page's tier is released (a slow model call); drafts a reply when asked to."""

    def __init__(
        self,
        stances: dict[str, Stance],
        *,
        draft: bool = False,
        unsent: frozenset[Tier] = frozenset(),
        held_calls: frozenset[int] = frozenset(),
    ) -> None:
        self.stances = stances
        self.draft = draft
        # Calls by send order (from 1) that also wait for `calls_gate`.
        self.held_calls = held_calls
        self.calls_gate = threading.Event()
        # Calls for these tiers wait in a queue that never reaches the model (one busy worker).
        self.unsent = unsent
        self.queued: list[Future[Extracted]] = []
        self.gates = {tier: threading.Event() for tier in (H, M, L)}
        self.sent: list[tuple[Tier, list[str], list[str]]] = []  # tier, urls, evidence shown
        self.answered: list[list[str]] = []
        self._changed = threading.Condition()  # notified at every call sent or answered
        self._pool = ThreadPoolExecutor(max_workers=4)
        self._order = 0

    def release(self, *tiers: Tier) -> None:
        for tier in tiers or (H, M, L):
            self.gates[tier].set()

    def sent_tiers(self) -> list[Tier]:
        return [tier for tier, _, _ in self.sent]

    def wait_sent(self, count: int) -> None:
        with self._changed:
            done = self._changed.wait_for(lambda: len(self.sent) >= count, timeout=5)
        assert done, f"only {len(self.sent)} call(s) sent"

    def wait_answered(self, count: int) -> None:
        with self._changed:
            done = self._changed.wait_for(lambda: len(self.answered) >= count, timeout=5)
        assert done, f"only {len(self.answered)} answer(s)"

    def send(self, pages: list[PageOutcome], known: list[Evidence]) -> Future[Extracted]:
        tier = pages[0].tier
        urls = [p.result.url for p in pages]
        with self._changed:
            self.sent.append((tier, urls, [evidence_key(e) for e in known]))
            self._changed.notify_all()
        self._order += 1
        if tier in self.unsent:
            self.queued.append(Future())
            return self.queued[-1]
        return self._pool.submit(self._answer, tier, urls, known, self._order)

    def _answer(self, tier: Tier, urls: list[str], known: list[Evidence], order: int) -> Extracted:
        assert self.gates[tier].wait(5)
        if order in self.held_calls:
            assert self.calls_gate.wait(5)
        with self._changed:
            self.answered.append(urls)
            self._changed.notify_all()
        items = [
            [evidence(u, tier=tier, stance=self.stances[u], quote=u)] if u in self.stances else []
            for u in urls
        ]
        draft = EarlyDraft(
            verdict=Verdict.REFUTED,
            text=f"draft after {len(known)} known",
            page_urls=urls,
            known=[evidence_key(e) for e in known],
            complete=True,
        )
        return Extracted([(i, "") for i in items], draft if self.draft else None, order)

    def close(self) -> None:
        self.release()
        self._pool.shutdown(wait=True)


@pytest.fixture
def extractors() -> Iterator[list[FakeExtractor]]:
    made: list[FakeExtractor] = []
    yield made
    for extractor in made:
        extractor.close()


def make(made: list[FakeExtractor], stances: dict[str, Stance], **kwargs: object) -> FakeExtractor:
    extractor = FakeExtractor(stances, **kwargs)  # type: ignore[arg-type]
    made.append(extractor)
    return extractor


def start(
    extractor: FakeExtractor,
    sources: list[Source],
    speculate_tiers: int = 2,
    *,
    redraft_stale: bool = True,
    leave_redrafts: bool = False,
) -> tuple[Future[RoundState], list[str]]:
    """The round on a thread of its own, so the test can hold and release the calls."""
    stops: list[str] = []
    runner = RoundRunner(
        ResearchConfig(speculate_tiers=speculate_tiers, redraft_stale=redraft_stale),
        score=lambda page: page,
        send=extractor.send,
        on_stop=lambda: stops.append("stop"),
        leave_redrafts=leave_redrafts,
    )
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(runner.run, sources, [], 1)
    pool.shutdown(wait=False)
    return future, stops


REFUTES, SUPPORTS = Stance.REFUTES, Stance.SUPPORTS
HIGH_REFUTES = {"https://h1.example/a": REFUTES, "https://h2.example/b": REFUTES}
THREE_TIERS = [
    source(H, "https://h1.example/a", "https://h2.example/b"),
    source(M, "https://m1.example/c"),
    source(L, "https://l1.example/d"),
]


def sent_while_held(
    extractor: FakeExtractor, sources: list[Source], tiers: list[Tier], speculate_tiers: int = 2
) -> RoundState:
    """The round, with every answer held until the calls for `tiers` are out; no other call is
    sent, then or after the answers are released (the round's end is the event that makes the
    count final, so no window is slept through)."""
    round_, _ = start(extractor, sources, speculate_tiers)
    extractor.wait_sent(len(tiers))
    assert extractor.sent_tiers()[: len(tiers)] == tiers
    extractor.release()
    state = round_.result(5)
    assert extractor.sent_tiers() == tiers
    return state


def reasons(state: RoundState) -> dict[str, str]:
    return {page.result.url: page.reason.value for page in state.outcomes}


def test_speculative_work_that_is_not_needed_never_reaches_the_evidence(
    extractors: list[FakeExtractor],
) -> None:
    stances = {**HIGH_REFUTES, "https://m1.example/c": REFUTES, "https://l1.example/d": REFUTES}
    extractor = make(extractors, stances)
    extractor.release(M, L)  # the lower tiers' answers come back first
    round_, stops = start(extractor, THREE_TIERS)
    extractor.wait_sent(3)
    extractor.wait_answered(2)  # the lower tiers' answers are back before High's
    extractor.release(H)
    state = round_.result(5)
    assert state.stopped and stops == ["stop"]
    assert {e.url for e in state.have} == set(HIGH_REFUTES)
    assert {page.result.url for page, _ in state.found} == set(HIGH_REFUTES)
    assert (state.speculative_calls, state.discarded_calls) == (2, 2)
    assert reasons(state)["https://m1.example/c"] == PageReason.DISCARDED
    assert reasons(state)["https://l1.example/d"] == PageReason.DISCARDED


def test_cancelled_speculation_is_recorded(extractors: list[FakeExtractor]) -> None:
    # The speculative call is still queued behind busy model workers when High meets the
    # stop rule: it is cancelled before it is ever sent.
    extractor = make(extractors, HIGH_REFUTES, unsent=frozenset({M}))
    round_, _ = start(extractor, THREE_TIERS[:2])
    extractor.wait_sent(2)
    extractor.release(H)
    state = round_.result(5)
    assert [call.cancelled() for call in extractor.queued] == [True]
    assert extractor.answered == [list(HIGH_REFUTES)]
    assert state.discarded_calls == 1
    medium = next(p for p in state.outcomes if p.tier is M)
    assert medium.use().reason == SPECULATION_DISCARDED
    assert not medium.use().used


def test_speculative_answers_count_when_the_stop_rule_is_not_met_above_them(
    extractors: list[FakeExtractor],
) -> None:
    stances = {"https://h1.example/a": REFUTES, "https://m1.example/c": REFUTES}
    extractor = make(extractors, stances)
    round_, _ = start(extractor, THREE_TIERS)
    extractor.wait_sent(3)  # all three tiers out before the first answer
    extractor.release()
    state = round_.result(5)
    assert state.stopped  # High and Medium refute: two pages
    assert {e.url for e in state.have} == {"https://h1.example/a", "https://m1.example/c"}
    # Medium counted; Low was speculative above a check that met the stop rule.
    assert reasons(state)["https://m1.example/c"] == PageReason.KEPT
    assert reasons(state)["https://l1.example/d"] == PageReason.DISCARDED
    assert (state.speculative_calls, state.discarded_calls) == (2, 1)


def test_speculation_reaches_the_same_evidence_and_trace_as_muse_order(
    extractors: list[FakeExtractor],
) -> None:
    stances = {"https://h1.example/a": SUPPORTS, "https://l1.example/d": REFUTES}
    ahead = make(extractors, stances)
    ahead.release()
    in_order = make(extractors, stances)
    in_order.release()
    fast = start(ahead, THREE_TIERS)[0].result(5)
    slow = start(in_order, THREE_TIERS, speculate_tiers=0)[0].result(5)
    assert [e.url for e in fast.have] == [e.url for e in slow.have]
    assert reasons(fast) == reasons(slow)
    assert slow.speculative_calls == 0


def test_muse_order_sends_nothing_below_a_call_that_could_meet_the_stop_rule(
    extractors: list[FakeExtractor],
) -> None:
    extractor = make(extractors, HIGH_REFUTES)
    state = sent_while_held(extractor, THREE_TIERS, [H], speculate_tiers=0)
    assert reasons(state)["https://m1.example/c"] == PageReason.NOT_NEEDED


def test_speculation_reaches_no_further_than_speculate_tiers_below(
    extractors: list[FakeExtractor],
) -> None:
    extractor = make(extractors, HIGH_REFUTES)
    state = sent_while_held(extractor, THREE_TIERS, [H, M], speculate_tiers=1)
    assert reasons(state)["https://l1.example/d"] == PageReason.NOT_NEEDED


def test_a_speculative_draft_written_before_the_evidence_above_it_is_not_kept(
    extractors: list[FakeExtractor],
) -> None:
    # High finds one refutation (not enough to stop): the Medium call, sent before it, was
    # shown nothing, so its draft is not the one MUSE's order would have written.
    stances = {"https://h1.example/a": REFUTES}
    extractor = make(extractors, stances, draft=True)
    round_, _ = start(extractor, THREE_TIERS[:2], redraft_stale=False)
    extractor.wait_sent(2)
    extractor.release()
    state = round_.result(5)
    assert [known for _, _, known in extractor.sent] == [[], []]
    assert state.stale_drafts == 1
    assert [draft.page_urls for _, draft in state.drafts] == [list(HIGH_REFUTES)]


H1_REFUTES = {"https://h1.example/a": REFUTES}


def held_with_one_refutation_above(
    extractors: list[FakeExtractor],
) -> tuple[FakeExtractor, Future[RoundState]]:
    """High refutes once (not enough to stop); Medium's call went out before High answered."""
    extractor = make(extractors, H1_REFUTES, draft=True)
    round_, _ = start(extractor, THREE_TIERS[:2])
    extractor.wait_sent(2)
    return extractor, round_


def test_a_stale_draft_is_replaced_by_its_in_order_call_sent_again(
    extractors: list[FakeExtractor],
) -> None:
    extractor, round_ = held_with_one_refutation_above(extractors)
    extractor.release()
    state = round_.result(5)
    h1 = evidence_key(next(e for e in state.have if e.url == "https://h1.example/a"))
    # Sent again exactly as MUSE's order would have sent it: after High, shown High's quote.
    assert extractor.sent[2] == (M, ["https://m1.example/c"], [h1])
    assert (state.stale_drafts, state.redraft_calls) == (1, 1)
    assert [(d.page_urls, d.known) for _, d in state.drafts] == [
        (list(HIGH_REFUTES), []),
        (["https://m1.example/c"], [h1]),
    ]
    assert [e.url for e in state.have] == ["https://h1.example/a"]  # its quotes: once


def test_a_stale_draft_is_asked_again_as_soon_as_the_calls_above_it_are_in(
    extractors: list[FakeExtractor],
) -> None:
    # Medium's first answer is still held: the in-order call goes out without waiting for it.
    extractor, round_ = held_with_one_refutation_above(extractors)
    extractor.release(H)
    extractor.wait_sent(3)
    assert not round_.done() and extractor.answered == [list(HIGH_REFUTES)]
    extractor.release(M)
    assert round_.result(5).redraft_calls == 1


def test_a_round_can_end_without_waiting_for_the_call_sent_again_for_a_draft(
    extractors: list[FakeExtractor],
) -> None:
    # The third call (Medium's, sent again in order) is held: the round's evidence is final
    # without it, so the round ends and hands it over (`pipeline.research.hedged_writer` decides).
    extractor = make(extractors, H1_REFUTES, draft=True, held_calls=frozenset({3}))
    round_, _ = start(extractor, THREE_TIERS[:2], leave_redrafts=True)
    extractor.wait_sent(2)
    extractor.release()
    state = round_.result(5)
    assert len(extractor.sent) == 3 and not state.redrafts[0].call.done()
    assert [d.page_urls for _, d in state.drafts] == [list(HIGH_REFUTES)]
    extractor.calls_gate.set()
    late = state.redrafts[0].call.result(5).draft
    assert late is not None and late.page_urls == ["https://m1.example/c"]
    assert state.redrafts[0].stale_verdict is Verdict.REFUTED  # what the stale draft said
    assert [e.url for e in state.have] == ["https://h1.example/a"]


def test_the_redrafted_round_drafts_what_muse_order_drafts(
    extractors: list[FakeExtractor],
) -> None:
    ahead = make(extractors, H1_REFUTES, draft=True)
    ahead.release()
    in_order = make(extractors, H1_REFUTES, draft=True)
    in_order.release()
    fast = start(ahead, THREE_TIERS)[0].result(5)
    slow = start(in_order, THREE_TIERS, speculate_tiers=0)[0].result(5)
    assert [d for _, d in fast.drafts] == [d for _, d in slow.drafts]
    assert [e.url for e in fast.have] == [e.url for e in slow.have]


def test_a_speculative_draft_is_kept_when_the_calls_above_it_found_nothing(
    extractors: list[FakeExtractor],
) -> None:
    extractor = make(extractors, {"https://m1.example/c": REFUTES}, draft=True)
    round_, _ = start(extractor, THREE_TIERS[:2])
    extractor.wait_sent(2)
    extractor.release()
    state = round_.result(5)
    assert state.stale_drafts == 0
    assert len(state.drafts) == 2
    # Its draft rests on what MUSE's order shows: not asked again.
    assert state.redraft_calls == 0 and len(extractor.sent) == 2


def test_no_speculation_while_more_pages_are_in_flight_than_the_stop_rule_needs(
    extractors: list[FakeExtractor],
) -> None:
    extractor = make(extractors, HIGH_REFUTES)
    three_high = source(H, "https://h1.example/a", "https://h2.example/b", "https://h3.example/e")
    assert sent_while_held(extractor, [three_high, *THREE_TIERS[1:]], [H]).stopped
