"""The reply's first draft when calls re-sent for a stale draft are still out
(`pipeline.research.hedged_writer`): the same draft as MUSE's order, without the writer waiting for
them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from pipeline.records import EarlyDraft, Tier, Verdict, WriterHedge
from pipeline.research.evidence_extraction import evidence_key
from pipeline.research.hedged_writer import FirstDraft, first_draft
from pipeline.research.round import Extracted, LateDraft
from testing.builders import evidence

A, B = "https://a.example/1", "https://b.example/2"
EVIDENCE = [
    evidence(A, quote="False."),
    evidence(B, tier=Tier.MEDIUM, confidence=0.8, quote="Wrong."),
]


def draft(text: str, *, verdict: Verdict = Verdict.REFUTED) -> EarlyDraft:
    """A draft from a call that read both pages: it fits when its verdict is the vote's."""
    return EarlyDraft(verdict=verdict, text=text, page_urls=[A, B], complete=True)


class Writer:
    """The writing call: records when it was started and answers when the test lets it."""

    def __init__(self, *, hold: bool = False) -> None:
        self.prepared = 0
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()

    def __call__(self) -> Callable[[], str]:
        self.prepared += 1

        def write() -> str:
            self.started.set()
            assert self.release.wait(5)
            return "writer's reply"

        return write


def late(order: int, stale: Verdict | None = None) -> tuple[LateDraft, Future[Extracted]]:
    """A call sent again for a stale draft (with verdict `stale`, or none), still out."""
    call: Future[Extracted] = Future()
    return LateDraft(order, call, stale), call


def answer(call: Future[Extracted], found: EarlyDraft | None, order: int) -> None:
    call.set_result(Extracted(pages=[], draft=found, order=order))


def in_background(fn: Callable[[], object]) -> Future[object]:
    result: Future[object] = Future()
    threading.Thread(target=lambda: result.set_result(fn()), daemon=True).start()
    return result


def test_the_writer_starts_beside_a_late_call_and_is_used_when_its_draft_does_not_fit() -> None:
    pending, call = late(1, stale=Verdict.MISLEADING)  # its stale draft had another verdict
    writer = Writer()
    chosen = in_background(
        lambda: first_draft([], [pending], Verdict.REFUTED, EVIDENCE, writer, hedge=True)
    )
    assert writer.started.wait(5)  # while the late call is still out
    answer(call, draft("misleading draft", verdict=Verdict.MISLEADING), 1)
    assert chosen.result(5) == FirstDraft("writer's reply", early=False, hedge=WriterHedge.USED)


def test_a_late_draft_that_fits_is_the_reply_and_the_hedged_writer_is_dropped() -> None:
    pending, call = late(1)
    writer = Writer(hold=True)
    chosen = in_background(
        lambda: first_draft([], [pending], Verdict.REFUTED, EVIDENCE, writer, hedge=True)
    )
    assert writer.started.wait(5)
    answer(call, draft("late draft"), 1)
    first = chosen.result(5)  # the writer is still held: not waited for
    assert (first.text, first.early, first.hedge) == ("late draft", True, WriterHedge.DISCARDED)
    writer.release.set()


def test_a_late_call_before_a_fitting_draft_in_hand_is_waited_for_and_wins() -> None:
    # MUSE's order takes the first draft that fits in call order: the late call's (order 1)
    # comes before the one in hand (order 2). No writer is needed either way.
    pending, call = late(1)
    writer = Writer()
    answer(call, draft("earlier call's draft"), 1)
    first = first_draft(
        [(2, draft("later call's draft"))], [pending], Verdict.REFUTED, EVIDENCE, writer
    )
    assert (first.text, first.hedge) == ("earlier call's draft", WriterHedge.NONE)
    assert writer.prepared == 0


def test_a_late_call_after_a_fitting_draft_in_hand_is_not_waited_for() -> None:
    pending, _never_answered = late(3)
    writer = Writer()
    first = first_draft([(2, draft("in hand"))], [pending], Verdict.REFUTED, EVIDENCE, writer)
    assert (first.text, first.early, writer.prepared) == ("in hand", True, 0)


def test_without_the_hedge_the_writer_waits_for_the_late_call() -> None:
    pending, call = late(1)
    writer = Writer()
    chosen = in_background(
        lambda: first_draft([], [pending], Verdict.REFUTED, EVIDENCE, writer, hedge=False)
    )
    assert not writer.started.wait(0.2)
    answer(call, None, 1)
    assert chosen.result(5) == FirstDraft("writer's reply", early=False, hedge=WriterHedge.NONE)


def test_the_writer_waits_for_a_late_call_whose_stale_draft_reached_the_verdict() -> None:
    # The same call, shown less, already drafted the vote's verdict: its late draft will
    # likely fit, and a writer started beside it would be spent for nothing.
    pending, call = late(1, stale=Verdict.REFUTED)
    writer = Writer()
    chosen = in_background(lambda: first_draft([], [pending], Verdict.REFUTED, EVIDENCE, writer))
    assert not writer.started.wait(0.2)
    answer(call, draft("late draft"), 1)
    assert chosen.result(5) == FirstDraft("late draft", early=True, hedge=WriterHedge.NONE)
    assert writer.prepared == 0


def test_a_late_call_cancelled_before_it_was_sent_has_no_draft() -> None:
    pending, call = late(1)
    call.cancel()
    first = first_draft([], [pending], Verdict.REFUTED, EVIDENCE, Writer())
    assert (first.text, first.hedge) == ("writer's reply", WriterHedge.USED)


def test_with_nothing_late_a_fitting_draft_is_used_and_no_writer_is_prepared() -> None:
    writer = Writer()
    first = first_draft(
        [(2, draft("second")), (1, draft("first"))], [], Verdict.REFUTED, EVIDENCE, writer
    )
    assert (first.text, first.early, first.hedge, writer.prepared) == (
        "first",
        True,
        WriterHedge.NONE,
        0,
    )


def test_an_evidence_key_shown_to_a_late_call_counts_as_seen() -> None:
    # The re-sent call read only page B, but was shown A's quote as evidence found: it fits.
    pending, call = late(1)
    shown = EarlyDraft(
        verdict=Verdict.REFUTED,
        text="from B, knowing A",
        page_urls=[B],
        known=[evidence_key(EVIDENCE[0])],
        complete=True,
    )
    answer(call, shown, 1)
    writer = Writer(hold=True)
    first = first_draft([], [pending], Verdict.REFUTED, EVIDENCE, writer)
    writer.release.set()
    assert (first.text, first.hedge) == ("from B, knowing A", WriterHedge.DISCARDED)
