"""The image-store bench on a small store: the band lookup and the full scan it is measured
against find the same images (the bench raises otherwise), and the figures are reported."""

from __future__ import annotations

from bench.image_store import run

KINDS = ("scan_ms", "band_ms", "scan_cpu_ms", "band_cpu_ms", "candidates")


def test_the_bench_compares_both_lookups_on_the_same_results() -> None:
    lines: list[str] = []
    numbers = run(lines.append, sizes=(2000,), postgres=False)
    assert set(numbers) == {f"sqlite_{kind}_2000" for kind in KINDS}
    assert 0 < numbers["sqlite_candidates_2000"] < 2000
    [line] = lines
    assert line.startswith("sqlite, 2000 images: full scan") and line.endswith("same results")
