from pipeline.config import ResearchConfig
from pipeline.records import Stance, Tier, Verdict
from pipeline.reply.verdict import assess, order_evidence, refuting_pages
from pipeline.research.plan import stop_rule
from testing.builders import evidence


def ev(url: str, stance: Stance, conf: float = 0.9, tier: Tier = Tier.HIGH, rel: float = 0.6):
    return evidence(url, tier=tier, stance=stance, confidence=conf, quote="q" * 30, relevance=rel)


def test_order_is_tier_then_relevance_then_confidence_and_stable():
    items = [
        ev("https://low.example/1", Stance.REFUTES, tier=Tier.LOW, rel=0.9),
        ev("https://med.example/1", Stance.REFUTES, tier=Tier.MEDIUM, rel=0.4),
        ev("https://high.example/a", Stance.CONTEXT, tier=Tier.HIGH, rel=0.5, conf=0.6),
        ev("https://high.example/b", Stance.REFUTES, tier=Tier.HIGH, rel=0.7),
        ev("https://high.example/c", Stance.REFUTES, tier=Tier.HIGH, rel=0.5, conf=0.9),
        ev("https://med.example/2", Stance.REFUTES, tier=Tier.MEDIUM, rel=0.8),
    ]
    ordered = [e.url for e in order_evidence(items)]
    assert ordered == [
        "https://high.example/b",
        "https://high.example/c",
        "https://high.example/a",
        "https://med.example/2",
        "https://med.example/1",
        "https://low.example/1",
    ]


def test_two_refuting_pages_refute_with_discounted_confidence():
    cfg = ResearchConfig()
    result = assess(
        [ev("https://a.example/1", Stance.REFUTES), ev("https://b.example/1", Stance.REFUTES)],
        cfg,
    )
    assert result.verdict is Verdict.REFUTED
    assert result.refuting_pages == 2
    # β (0.7) × mean confidence 0.9 × full agreement
    assert result.confidence == round(0.7 * 0.9, 4)
    assert result.decided


def test_beta_is_configurable():
    items = [ev("https://a.example/1", Stance.REFUTES, conf=1.0)]
    assert assess(items, ResearchConfig(beta=1.0)).confidence == 1.0
    assert assess(items, ResearchConfig(beta=0.5)).confidence == 0.5


def test_context_only_evidence_makes_misleading_not_dropped():
    result = assess([ev("https://a.example/1", Stance.CONTEXT, conf=0.95)], ResearchConfig())
    assert result.verdict is Verdict.MISLEADING
    assert result.confidence > 0


def test_context_does_not_cancel_a_refutation():
    items = [
        ev("https://a.example/1", Stance.REFUTES, conf=0.9),
        ev("https://b.example/1", Stance.CONTEXT, conf=0.9),
        ev("https://c.example/1", Stance.CONTEXT, conf=0.9),
    ]
    assert assess(items, ResearchConfig()).verdict is Verdict.REFUTED


def test_opposing_evidence_of_equal_weight_falls_below_threshold():
    items = [
        ev("https://a.example/1", Stance.REFUTES, conf=0.8),
        ev("https://b.example/1", Stance.SUPPORTS, conf=0.8),
    ]
    result = assess(items, ResearchConfig())
    assert result.verdict is Verdict.MISLEADING
    assert abs(result.signed_score) < 0.15
    # half the weight is against the winner: agreement 0.5 halves the confidence
    assert result.confidence < 0.5
    assert not result.decided


def test_threshold_is_configurable():
    items = [
        ev("https://a.example/1", Stance.REFUTES, conf=0.8),
        ev("https://b.example/1", Stance.SUPPORTS, conf=0.5),
    ]
    assert assess(items, ResearchConfig(vote_threshold=0.05)).verdict is Verdict.REFUTED
    assert assess(items, ResearchConfig(vote_threshold=0.5)).verdict is Verdict.MISLEADING


def test_supported_verdict():
    items = [ev("https://a.example/1", Stance.SUPPORTS), ev("https://b.example/1", Stance.SUPPORTS)]
    assert assess(items, ResearchConfig()).verdict is Verdict.SUPPORTED


def test_no_evidence_is_not_enough_evidence():
    result = assess([], ResearchConfig())
    assert result.verdict is Verdict.NOT_ENOUGH_EVIDENCE
    assert not result.decided


def test_excluded_tier_carries_no_weight():
    items = [ev("https://x.example/1", Stance.REFUTES, tier=Tier.EXCLUDED)]
    assert assess(items, ResearchConfig()).verdict is Verdict.NOT_ENOUGH_EVIDENCE


def test_lower_tier_weighs_less():
    high = assess([ev("https://a.example/1", Stance.REFUTES)], ResearchConfig())
    low = assess([ev("https://a.example/1", Stance.REFUTES, tier=Tier.LOW)], ResearchConfig())
    assert abs(low.signed_score) < abs(high.signed_score)


def test_stop_rule_counts_distinct_pages_not_items():
    cfg = ResearchConfig(stop_after_refuting_pages=2)
    same_page = [
        ev("https://a.example/1", Stance.REFUTES),
        ev("https://a.example/1", Stance.REFUTES),
    ]
    assert refuting_pages(same_page) == 1
    assert not stop_rule(same_page, cfg)
    two = [*same_page, ev("https://b.example/2", Stance.REFUTES)]
    assert stop_rule(two, cfg)
    assert not stop_rule(two, ResearchConfig(stop_after_refuting_pages=3))
