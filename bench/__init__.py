"""Benchmarks of the factnote pipeline. Run them all with `make bench` (`python -m bench`).

`python -m bench` runs every registered benchmark in turn, prints a table and one
`benchmark.number: value` line per result, and writes them as JSON to
`bench/results/latest.json` (git-ignored). `python -m bench latency cost` runs only the
benchmarks whose names contain one of the words given. On 2 cores expect well over half an
hour (not timed since each latency and cost mode runs three times): one latency run takes
about 11 minutes, of which about 9 are the simulated remote waits of 20 posts run one after
another in both modes (the sequential mode's waits alone are about 7).

* `pipeline_latency`: wall time per post (p50/p95/mean) with our concurrency and with one
  worker, 20 fixture posts each, against simulated remote delays (LLM 1.5 s per call, search
  0.5 s, page 1.0 s); their ratio; LLM calls; a per-stage breakdown.
* `pipeline_cost`: prompt and completion tokens per post, ours against MUSE-style extraction
  (every usable page, whole text capped at 20,000 characters, until the stop rule).
* `pipeline_memory`: peak RSS of one `factnote check --json` process, without an LLM
  (`needs_llm`) and with the fake LLM configured, and its start-up time.
* `cli_startup`: cold start of a fresh `factnote` process per command (`--help`, `guard`,
  `sources lookup`, `status`, `check --help`), median of 3 runs.

The fixture world is in `bench/data/scenarios/` (one TOML file a post: its text, the model's
answers, the pages found), `bench/fixtures.py` (loads them, generates the pages) and
`bench/world.py` (fake search engine, fake websites, scripted model). Separately,
`bench/calibrate_relevance.py` calibrates the relevance thresholds on HealthVer
(`python bench/calibrate_relevance.py --help`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def summary(values: Sequence[float]) -> tuple[float, float, float]:
    """(p50, p95, mean) of `values`, linear interpolation between samples; zeros when empty."""
    if not values:
        return 0.0, 0.0, 0.0
    data = np.asarray(values, dtype=float)
    return (
        float(np.percentile(data, 50)),
        float(np.percentile(data, 95)),
        float(data.mean()),
    )


def ratio(numerator: float, denominator: float) -> float:
    """`numerator / denominator`, or 0 when there is nothing to divide by (an empty run)."""
    return numerator / denominator if denominator else 0.0


def dataset_parser(doc: str | None, data: Path, seed: int) -> argparse.ArgumentParser:
    """The command line of a study on a data set: `--data` (its path) and `--seed` (of its
    folds or samples), with the first line of the module's docstring as the description."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--data", type=Path, default=data)
    parser.add_argument("--seed", type=int, default=seed)
    return parser
