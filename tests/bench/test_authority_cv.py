"""The cross-validation that picks the authority retriever's fusion (bench/authority_cv.py).

Rumors are made-up score tables (no model): what is pinned is how folds are cut and how a
setting is picked, not retrieval quality.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench import authority_cv
from bench.authority_cv import BM25, PLAIN_BM25, RumorScores, cross_validate, select, split
from pipeline.config import AuthorityConfig

DOCS = ["d0", "d1", "d2", "d3"]


def _rumor(rumor_id: str, lexical: list[float], dense: list[float]) -> RumorScores:
    return RumorScores(rumor_id, DOCS, np.array(lexical), np.array(dense))


def fusion_wins(rumor_id: str) -> RumorScores:
    # The gold d1 is second by words and second by meaning; each scorer's own top is the other
    # scorer's bottom, so only a fusion puts d1 first.
    return _rumor(rumor_id, [10.0, 9.0, 0.0, 0.0], [-0.1, 0.75, 0.9, 0.0])


def bm25_wins(rumor_id: str) -> RumorScores:
    # The gold d0 is first by words and last by meaning: a fusion pushes it down.
    return _rumor(rumor_id, [10.0, 9.0, 0.0, 0.0], [-0.1, 0.9, 0.5, 0.0])


def all_agree(rumor_id: str) -> RumorScores:
    return _rumor(rumor_id, [10.0, 2.0, 1.0, 0.0], [0.9, 0.1, 0.0, -0.1])


GOLD = {"fusion": "d1", "bm25": "d0", "agree": "d0"}


def _qrels(rumors: list[RumorScores]) -> dict[str, set[str]]:
    return {r.rumor_id: {GOLD[r.rumor_id.split("-")[0]]} for r in rumors}


def test_folds_are_deterministic_disjoint_and_cover_every_rumor() -> None:
    ids = [f"r{i:02d}" for i in range(19)]
    folds = split(ids, 5, 13)
    assert folds == split(list(reversed(ids)), 5, 13), "same seed, same folds, any input order"
    assert folds != split(ids, 5, 14)
    held_out = [i for _train, test in folds for i in test]
    assert sorted(held_out) == ids and len(held_out) == len(set(held_out))
    for train, test in folds:
        assert not set(train) & set(test)
        assert sorted(train + test) == ids


def test_each_fold_picks_its_setting_from_its_training_rumors_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rumors = [fusion_wins(f"fusion-{i}") for i in range(6)] + [
        all_agree(f"agree-{i}") for i in range(4)
    ]
    qrels = _qrels(rumors)
    seen: list[tuple[set[str], set[str]]] = []
    real_select = authority_cv.select

    def spy(
        picked: list[RumorScores], picked_qrels: dict[str, set[str]], base: AuthorityConfig
    ) -> authority_cv.Candidate:
        seen.append(({r.rumor_id for r in picked}, set(picked_qrels)))
        return real_select(picked, picked_qrels, base)

    monkeypatch.setattr(authority_cv, "select", spy)
    report = cross_validate(rumors, qrels, AuthorityConfig(), folds=5, seed=13)
    assert len(report.folds) == 5 and len(seen) == 6  # five folds, then all rumors
    for fold, (picked, picked_qrels) in zip(report.folds, seen, strict=False):
        assert picked == picked_qrels
        assert not picked & set(fold.test_ids), "a held-out rumor was used to pick the setting"
        assert picked | set(fold.test_ids) == set(qrels)
    assert seen[-1][0] == set(qrels)


def test_bm25_is_kept_when_a_fusion_wins_one_rumor_and_loses_another() -> None:
    rumors = [
        fusion_wins("fusion-0"),
        bm25_wins("bm25-0"),
        *(all_agree(f"agree-{i}") for i in range(4)),
    ]
    assert select(rumors, _qrels(rumors), AuthorityConfig()) is BM25


def test_a_fusion_that_wins_on_a_single_rumor_is_not_taken() -> None:
    rumors = [fusion_wins("fusion-0"), *(all_agree(f"agree-{i}") for i in range(5))]
    assert select(rumors, _qrels(rumors), AuthorityConfig()) is BM25


def test_a_fusion_that_wins_on_every_rumor_is_taken_with_the_lowest_best_weight() -> None:
    rumors = [fusion_wins(f"fusion-{i}") for i in range(6)]
    chosen = select(rumors, _qrels(rumors), AuthorityConfig())
    assert chosen.knobs == 1 and chosen.fusion == "weighted"
    assert chosen.dense_weight == pytest.approx(0.2)  # 0.1 leaves d0 ahead; 0.2 is enough


def test_held_out_scores_are_reported_for_bm25_dense_and_the_chosen_setting() -> None:
    rumors = [fusion_wins(f"fusion-{i}") for i in range(10)]
    report = cross_validate(rumors, _qrels(rumors), AuthorityConfig(), folds=5, seed=13)
    for fold in report.folds:
        assert set(fold.scores) == {"bm25_plain", "bm25", "dense", "chosen"}
        assert fold.scores["bm25"] == (pytest.approx(0.5), pytest.approx(1.0))
        assert fold.scores["chosen"][0] == pytest.approx(1.0)
    assert report.mean_spread("chosen", 0) == (pytest.approx(1.0), pytest.approx(0.0))
    assert report.default.knobs == 1, "a fusion that wins on held-out rumors is the default"


def test_the_default_stays_bm25_when_the_fusion_gains_nothing_on_held_out_rumors() -> None:
    # Tuned on all ten rumors the fusion looks better (two wins), but no fold that holds out
    # a win had the other win alone to learn from: held out, it scores what BM25 scores.
    rumors = [fusion_wins("fusion-0"), fusion_wins("fusion-1")] + [
        all_agree(f"agree-{i}") for i in range(8)
    ]
    qrels = _qrels(rumors)
    assert select(rumors, qrels, AuthorityConfig()).knobs == 1
    report = cross_validate(rumors, qrels, AuthorityConfig(), folds=5, seed=13)
    assert report.mean_spread("chosen", 0)[0] <= report.mean_spread("bm25", 0)[0] + 1e-9
    assert report.default is PLAIN_BM25
    assert [(d.tuned, d.replaces) for d in report.decisions] == [
        ("bm25", False),
        ("cv-chosen", False),
    ]


def tie_helps(rumor_id: str) -> RumorScores:
    # No statement shares a word with the claim; the gold d2 is newest-but-two and closest in
    # meaning: cosine ties put it first, date ties third.
    return _rumor(rumor_id, [0.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.9, 0.0])


def test_cosine_ties_replace_plain_bm25_only_when_the_gain_beats_the_fold_spread() -> None:
    helps_everywhere = [tie_helps(f"tie-{i}") for i in range(10)]
    qrels = {r.rumor_id: {"d2"} for r in helps_everywhere}
    report = cross_validate(helps_everywhere, qrels, AuthorityConfig(), folds=5, seed=13)
    assert report.decisions[0].replaces and report.default is BM25

    # Two rumors of ten gain: a fold that holds both out gains a lot, the others nothing.
    mixed = [tie_helps("tie-0"), tie_helps("tie-1")] + [all_agree(f"agree-{i}") for i in range(8)]
    mixed_qrels = {r.rumor_id: {"d2" if r.rumor_id.startswith("tie") else "d0"} for r in mixed}
    report = cross_validate(mixed, mixed_qrels, AuthorityConfig(), folds=5, seed=13)
    [cosine_ties, _chosen] = report.decisions
    assert cosine_ties.gain > 0 and not cosine_ties.replaces
    assert report.default is PLAIN_BM25
