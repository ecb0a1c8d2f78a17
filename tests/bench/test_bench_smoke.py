"""The benchmarks run end to end in a tiny configuration and report what they promise.

No timing is asserted: these pin that each benchmark drives the real pipeline through its
fixture world and returns its numbers, not how fast anything is.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench import (
    fixtures,
    pipeline_cost,
    pipeline_latency,
    pipeline_memory,
)
from bench.world import FixtureSearch, extraction_items
from pipeline.research.evidence_extraction import normalise

# A High-tier refutation, a post that needs a second round, and an opinion.
TINY_POSTS = ("p01", "p15", "p14")


def test_fixture_pages_are_article_length_and_keep_their_key_sentences() -> None:
    pages = fixtures.all_pages()
    assert len(fixtures.POSTS) == 20
    assert {p.publisher.tier for p in pages} == {"high", "medium", "low"}
    assert all(p.publisher.domain.endswith(".example") for p in pages)
    for page in pages:
        doc = fixtures.document(page.url)
        assert doc.ok and 500 <= doc.word_count <= 2700, (page.url, doc.word_count)
        for key in page.key:
            assert normalise(key) in normalise(doc.text), (page.url, key)
        # The scripted extractor quotes a page only from text it was actually sent.
        assert extraction_items(page, "") == []


def test_scenario_files_give_the_documented_mix_of_posts() -> None:
    counts = Counter(post.scenario for post in fixtures.POSTS)
    assert counts == {
        "high": 8,
        "lower_tiers": 4,
        "second_round": 3,
        "context": 1,
        "refuted_all_tiers": 1,
        "supported": 1,
        "no_evidence": 1,
        "not_checkable": 1,
    }
    assert [p.id for p in fixtures.POSTS] == [f"p{i:02d}" for i in range(1, 21)]
    assert len(fixtures.all_pages()) == 115


def test_scenario_file_with_a_misspelt_field_is_refused_by_name(tmp_path: Path) -> None:
    good = (fixtures.SCENARIO_DIR / "p01.toml").read_text()
    bad = tmp_path / "p99.toml"
    bad.write_text(good.replace("found_by =", "foundby =", 1))
    with pytest.raises(ValidationError, match="foundby"):
        fixtures.load_post(bad)


def test_undated_page_in_a_scenario_file_has_no_publication_date(tmp_path: Path) -> None:
    text = (fixtures.SCENARIO_DIR / "p01.toml").read_text()
    path = tmp_path / "p98.toml"
    path.write_text(text.replace('published = "2026-01-14T09:00:00"', "undated = true", 1))
    post = fixtures.load_post(path)
    assert post.pages[0].published is None
    assert post.pages[1].published is not None


def test_fixture_search_returns_only_the_tier_asked_for_through_site_filters() -> None:
    search = FixtureSearch(delay_s=0.0)
    query = fixtures.POSTS[0].queries[0]
    every_tier = search.search(query, limit=10)
    high = search.search(query, limit=10, sites=["health-ministry.example", "wire-agency.example"])
    assert len(every_tier) > len(high) > 0
    assert all(r.url.startswith("http://health-ministry.example/") for r in high)
    assert search.calls == 2


def test_latency_benchmark_runs_both_modes_and_reports_expected_keys() -> None:
    cfg = pipeline_latency.LatencyConfig(post_ids=TINY_POSTS).scaled(0.01)
    runs = pipeline_latency.measure(cfg)
    result = pipeline_latency.report(runs, cfg)
    for mode in ("concurrent", "sequential"):
        for stat in ("p50_s", "p95_s", "mean_s"):
            assert f"{mode}_{stat}" in result
        assert f"{mode}_mean_research_s" in result
    assert {"ratio_p50", "ratio_mean", "muse_order_p50_s", "llm_calls_concurrent"} <= set(result)
    assert result["posts"] == 3
    # Both modes reach the same decisions with the same calls; only the scheduling differs.
    assert result["same_outcome_posts"] == 3
    assert result["llm_calls_concurrent"] == result["llm_calls_sequential"] > 3
    by_post = {r.post_id: r for r in runs if r.mode == "concurrent"}
    assert by_post["p15"].calls("requery") == 2  # no evidence: three rounds
    # Not checkable: only the head start searched (once per tier); nothing was extracted.
    assert by_post["p14"].searches == 3
    assert by_post["p14"].calls("evidence") == 0
    assert by_post["p01"].outcome == "reply/refuted"


def test_cost_benchmark_compares_our_prompts_with_whole_page_extraction() -> None:
    result = pipeline_cost.run(pipeline_cost.CostConfig(post_ids=("p11", "p14"), repeats=2))
    expected = {
        "ours_prompt_tokens_mean",
        "ours_prompt_tokens_p50",
        "reference_prompt_tokens_mean",
        "reference_prompt_tokens_p50",
        "prompt_ratio_mean",
        "extraction_prompt_ratio",
        "ours_completion_tokens_mean",
        "reference_completion_tokens_mean",
    }
    assert expected <= set(result)
    assert result["posts"] == 2
    assert result["ours_extraction_calls_per_post"] > 0
    # Local compute is the median over the runs, with their spread.
    assert result["local_compute_runs"] == 2
    low, high = result["local_compute_wall_mean_min_s"], result["local_compute_wall_mean_max_s"]
    assert 0 < low <= result["local_compute_wall_mean_s"] <= high
    # Whole pages are longer than the relevant passages of the same pages.
    assert (
        result["reference_tokens_per_extraction_call"] > result["ours_tokens_per_extraction_call"]
    )
    # Focused passages send fewer tokens than whole ones, and p11's decision is the same.
    assert result["whole_passages_prompt_tokens_p50"] > result["ours_prompt_tokens_p50"]
    assert result["decisions_changed_by_focus"] == 0


def test_memory_benchmark_measures_a_real_factnote_check_process() -> None:
    post = next(p for p in fixtures.POSTS if p.scenario == "no_evidence")
    cfg = pipeline_memory.MemoryConfig(post_id=post.id, index_post_ids=(post.id,), with_llm=False)
    result = pipeline_memory.run(cfg)
    assert result["index_documents"] == len(post.pages)
    assert result["no_llm_exit_code"] == 0
    assert result["no_llm_needs_llm"] == 1
    # The embedding model and its runtime (436 MiB measured with the ONNX export), at the least.
    assert result["no_llm_peak_rss_mib"] > 300
    assert "with_llm_peak_rss_mib" not in result
