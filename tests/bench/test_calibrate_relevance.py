"""How bench/calibrate_relevance.py builds its negatives and cross-validates its thresholds.

The rows are made up in HealthVer's shape (claim, evidence, label, topic_ip, question; the
columns of `healthver_dev.csv`); no model runs here.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bench import calibrate_relevance
from bench.calibrate_relevance import build_corpus, cross_validate, index_rows, passage_rule


def _rows() -> list[dict[str, str]]:
    rows = []
    for topic in range(6):
        for claim in range(3):
            for ev, label in ((0, "Supports"), (1, "Neutral"), (2, "Refutes")):
                rows.append(
                    {
                        "claim": f"claim {topic}.{claim}",
                        "evidence": f"evidence {topic}.{claim}.{ev}",
                        "label": label,
                        "topic_ip": str(topic),
                        "question": f"question {topic}?",
                    }
                )
    return rows


def _topic(evidence: str) -> str:
    return evidence.split()[1].split(".")[0]


@pytest.mark.parametrize("aside", [False, True])
def test_negatives_are_same_topic_evidence_for_other_claims_or_other_topics(
    aside: bool,
) -> None:
    rows = _rows()
    data = index_rows(rows)
    corpus = build_corpus(rows, negatives=4, seed=13, aside=aside)
    assert corpus == build_corpus(rows, negatives=4, seed=13, aside=aside), "seeded"
    kinds = Counter(p.kind for p in corpus.pairs)
    assert kinds["same_topic"] and kinds["other_topic"] and kinds["positive"]
    for pair in corpus.pairs:
        post = corpus.posts[pair.post]
        speaks = set().union(*(data.speaks[c] for c in post.claims))
        paired = speaks | set().union(*(data.neutral[c] for c in post.claims))
        if pair.kind == "positive":
            assert pair.evidence in speaks
        elif pair.kind == "same_topic":
            assert _topic(pair.evidence) == post.topic and pair.evidence not in paired
        elif pair.kind == "other_topic":
            assert _topic(pair.evidence) != post.topic
            if aside:  # the aside's own topic is neither relevant nor a clean negative
                aside_topic = post.text.split()[3].split(".")[0]  # "claim T.C claim T.C"
                assert _topic(pair.evidence) != aside_topic
        else:
            assert pair.kind == "neutral" and pair.evidence in data.neutral[post.claims[0]]
    if aside:
        assert all(len(p.claims) == 1 and p.text != p.claims[0] for p in corpus.posts)


def test_threshold_folds_hold_each_topic_out_exactly_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    topics = [str(t) for t in range(10) for _ in range(6)]
    # Each score names its topic, so the spy can tell which topics a fold trained on.
    scores = np.array([int(t) / 100 for t in topics])
    kinds = ["positive" if i % 2 else "same_topic" for i in range(len(topics))]
    trained_on: list[set[float]] = []
    real_rule = calibrate_relevance.passage_rule

    def spy(values: np.ndarray, positive: np.ndarray) -> float:
        trained_on.append(set(values.tolist()))
        return real_rule(values, positive)

    monkeypatch.setattr(calibrate_relevance, "passage_rule", spy)
    folds = cross_validate(scores, kinds, topics, folds=5)
    assert len(folds) == 5 and len(trained_on) == 5
    everything = set(scores.tolist())
    held_out = Counter(v for seen in trained_on for v in everything - seen)
    assert held_out == Counter({v: 1 for v in everything})


def test_passage_rule_keeps_the_recall_floor() -> None:
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.05])
    positive = np.array([True] * 10 + [False])
    threshold = passage_rule(scores, positive)
    assert threshold == pytest.approx(0.2)  # 9 of the 10 positives stay above it
    assert (scores[positive] >= threshold).mean() >= 0.9
