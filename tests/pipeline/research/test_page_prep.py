"""Preparing pages: the embedding model goes to the most urgent page between short passes."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from pipeline.config import RelevanceConfig
from pipeline.records import Tier
from pipeline.relevance.scoring import FloatMatrix, encode_page
from pipeline.research.page_prep import ScoringGate
from testing.waits import wait_until

TEXT = "\n\n".join(f"Paragraph {i} says something different about topic {i}." for i in range(6))


class RecordingEmbedder:
    """Records which page each forward pass was for; the first pass waits until told."""

    def __init__(self) -> None:
        self.passes: list[str] = []
        self.release_first = threading.Event()
        self.first_started = threading.Event()

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        label = "low" if "low" in threading.current_thread().name else "high"
        if not self.passes:
            self.first_started.set()
            self.release_first.wait(5)
        self.passes.append(label)
        return np.ones((len(texts), 4), dtype=np.float32)


def test_a_high_tier_page_gets_the_model_between_the_passes_of_a_low_tier_page() -> None:
    gate = ScoringGate()
    model = RecordingEmbedder()
    cfg = RelevanceConfig(passage_words=10)

    def encode(tier: Tier) -> None:
        @contextmanager
        def turn() -> Iterator[bool]:
            with gate.turn(tier):
                yield True

        encode_page(model, "u", TEXT, cfg, turn=turn, chunk=2)  # type: ignore[arg-type]

    low = threading.Thread(target=encode, args=(Tier.LOW,), name="low")
    low.start()
    assert model.first_started.wait(5)
    high = threading.Thread(target=encode, args=(Tier.HIGH,), name="high")
    high.start()
    wait_until(lambda: gate.waiting == 1, what="the high page waiting")
    model.release_first.set()
    low.join(5)
    high.join(5)
    # The low page's first pass had started; every later pass waited for the high page.
    assert model.passes == ["low", "high", "high", "high", "low", "low"]
