"""Run the registered benchmarks, print their numbers, and save them to bench/results/latest.json.

To add a benchmark, append a `Benchmark` to `BENCHMARKS`: a name and a callable that takes a
log function (progress lines; may be ignored) and returns a dict of named numbers.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench import (
    authority_cv,
    calibrate_relevance,
    claim_checkthat,
    claim_languages,
    claim_polarity,
    claim_scale,
    cli_startup,
    deadlines,
    image_embedding_runtime,
    image_ocr,
    image_similarity,
    image_store,
    memory_retrieval,
    passage_focus,
    pipeline_cost,
    pipeline_latency,
    pipeline_memory,
    publisher_coverage,
    queue_throughput,
    review_queue,
    runtime_throughput,
    video,
)
from bot import platforms

Log = Callable[[str], None]
RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"


@dataclass(frozen=True)
class Benchmark:
    name: str
    run: Callable[[Log], dict[str, float]]


BENCHMARKS: list[Benchmark] = [
    Benchmark("pipeline_latency", lambda log: pipeline_latency.run(log=log)),
    Benchmark("pipeline_cost", lambda log: pipeline_cost.run(log=log)),
    Benchmark("passage_focus", lambda log: passage_focus.run(log=log)),
    Benchmark("pipeline_memory", lambda log: pipeline_memory.run(log=log)),
    Benchmark("cli_startup", lambda log: cli_startup.run(log=log)),
    Benchmark("authority_cv", lambda log: authority_cv.run(log=log)),
    Benchmark("claim_polarity", lambda log: claim_polarity.run(log=log)),
    Benchmark("claim_languages", lambda log: claim_languages.run(log=log)),
    Benchmark("claims_checkthat", lambda log: claim_checkthat.run(log=log)),
    Benchmark("claim_scale", lambda log: claim_scale.run(log=log)),
    Benchmark("relevance_healthver", lambda log: calibrate_relevance.run(log=log)),
    Benchmark("publisher_coverage", lambda log: publisher_coverage.run(log=log)),
    Benchmark("image_ocr", lambda log: image_ocr.run(log=log)),
    Benchmark("image_similarity", lambda log: image_similarity.run(log=log)),
    Benchmark("image_embedding_runtime", lambda log: image_embedding_runtime.run(log=log)),
    Benchmark("image_store", lambda log: image_store.run(log=log)),
    Benchmark("memory_retrieval", lambda log: memory_retrieval.run(log=log)),
    Benchmark("deadlines", lambda log: deadlines.run(log=log)),
    Benchmark("video", lambda log: video.run(log=log)),
    Benchmark("review_queue", lambda log: review_queue.run(log=log)),
    Benchmark(
        "runtime_throughput",
        lambda log: {k: float(v) for k, v in runtime_throughput.run(log=log).items()},
    ),
    Benchmark(
        "queue_throughput",
        lambda log: {k: float(v) for k, v in queue_throughput.drain_processes(log=log).items()},
    ),
]


def selected(words: list[str]) -> list[Benchmark]:
    if not words:
        return list(BENCHMARKS)
    chosen = [b for b in BENCHMARKS if any(w in b.name for w in words)]
    if not chosen:
        names = ", ".join(b.name for b in BENCHMARKS)
        raise SystemExit(f"no benchmark matches {' '.join(words)} (known: {names})")
    return chosen


def main(argv: list[str]) -> int:
    # Models are loaded from local packages only, as in the CLI.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    platforms.install()  # the runs that go through the bot's worker look platforms up
    console = Console(stderr=True, highlight=False)
    results: dict[str, dict[str, float]] = {}
    seconds: dict[str, float] = {}
    failed: dict[str, str] = {}
    for bench in selected(argv):
        console.rule(bench.name)
        start = time.perf_counter()
        try:
            results[bench.name] = bench.run(lambda line: console.print(line, markup=False))
        except Exception as exc:  # one broken benchmark must not cost the others' numbers
            console.print_exception()
            failed[bench.name] = f"{type(exc).__name__}: {exc}"
        seconds[bench.name] = time.perf_counter() - start

    table = Table("benchmark", "number", "value", title="factnote benchmarks")
    for name, numbers in results.items():
        for key, value in numbers.items():
            table.add_row(name, key, f"{value:.4g}")
    Console(highlight=False).print(table)
    for name, numbers in results.items():
        for key, value in numbers.items():
            print(f"{name}.{key}: {value:.6g}")
    for name, spent in seconds.items():
        print(f"{name}.bench_seconds: {spent:.1f}")
    for name, error in failed.items():
        print(f"{name}: FAILED ({error})")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "finished_at": datetime.now(UTC).isoformat(),
        "bench_seconds": seconds,
        "results": results,
        "failed": failed,
    }
    RESULTS.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
