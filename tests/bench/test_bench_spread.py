"""The benches' repeated runs: each figure is the median over runs, with its spread beside it."""

from __future__ import annotations

import pytest

from bench.pipeline_cost import PostCost, local_compute
from bench.pipeline_latency import over_runs


def test_latency_figures_are_the_median_over_runs_with_lowest_and_highest() -> None:
    reports = [
        {"ratio_p50": 3.0, "ratio_p95": 2.0, "posts": 20.0},
        {"ratio_p50": 5.0, "ratio_p95": 4.0, "posts": 20.0},
        {"ratio_p50": 4.0, "ratio_p95": 9.0, "posts": 20.0},
    ]
    out = over_runs(reports)
    assert out["runs"] == 3
    assert (out["ratio_p50"], out["ratio_p50_min"], out["ratio_p50_max"]) == (4.0, 3.0, 5.0)
    assert (out["ratio_p95"], out["ratio_p95_min"], out["ratio_p95_max"]) == (4.0, 2.0, 9.0)
    assert out["posts"] == 20.0  # not a spread figure: the first run's value
    assert "concurrent_p50_s_min" not in out  # absent from every run: not invented


def test_local_compute_is_the_median_of_run_means_with_their_spread() -> None:
    def run(*walls: float) -> list[PostCost]:
        return [PostCost(post_id=f"p{i}", wall_s=w, cpu_s=w / 2) for i, w in enumerate(walls)]

    out = local_compute([run(1.0, 3.0), run(2.0, 2.0), run(10.0, 20.0)])
    assert out["local_compute_runs"] == 3
    assert out["local_compute_wall_mean_s"] == pytest.approx(2.0)  # run means 2, 2, 15
    assert out["local_compute_wall_mean_min_s"] == pytest.approx(2.0)
    assert out["local_compute_wall_mean_max_s"] == pytest.approx(15.0)
    assert out["local_compute_cpu_mean_s"] == pytest.approx(1.0)
