"""The embedding model's gate with room for more than one page (`ScoringGate(capacity)`):
one-thread ONNX sessions encode side by side, one per core, the most urgent page still first.
(Single-capacity ordering is pinned in tests/pipeline/research/test_page_prep.py.)"""

from __future__ import annotations

import os
import threading

from pipeline.config import RelevanceConfig
from pipeline.records import Tier
from pipeline.relevance.scoring import get_embedder
from pipeline.research.page_prep import ScoringGate
from testing.waits import wait_until


def test_two_pages_hold_a_gate_of_two_and_the_high_tier_goes_before_the_low_next() -> None:
    gate = ScoringGate(capacity=2)
    release = threading.Event()
    inside: list[str] = []
    order: list[str] = []

    def use(name: str, tier: Tier) -> None:
        with gate.turn(tier):
            inside.append(name)
            order.append(name)
            release.wait(5)
            inside.remove(name)

    first = [threading.Thread(target=use, args=(n, Tier.LOW)) for n in ("a", "b")]
    for thread in first:
        thread.start()
    wait_until(lambda: len(inside) == 2, what="two pages inside the gate")
    later = [
        threading.Thread(target=use, args=("low", Tier.LOW)),
        threading.Thread(target=use, args=("high", Tier.HIGH)),
    ]
    later[0].start()
    wait_until(lambda: gate.waiting == 1, what="one page waiting")
    later[1].start()
    wait_until(lambda: gate.waiting == 2, what="two pages waiting")
    assert len(inside) == 2  # a third page waits while two are encoding
    release.set()
    for thread in [*first, *later]:
        thread.join(5)
    assert sorted(order[:2]) == ["a", "b"]
    assert order[2:] == ["high", "low"]


def test_the_onnx_embedder_runs_one_page_per_core_and_torch_one() -> None:
    onnx = get_embedder(RelevanceConfig(onnx_threads=1))
    cores = len(os.sched_getaffinity(0))
    assert onnx.backend == "onnx" and onnx.parallel == max(1, cores)
    assert get_embedder(RelevanceConfig(onnx_threads=0)).parallel == 1
    assert get_embedder(RelevanceConfig(backend="torch")).parallel == 1
