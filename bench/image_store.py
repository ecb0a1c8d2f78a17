"""Near-duplicate lookups in the SQL image store: the band-indexed lookup (`storage.images`,
migration 0012) against comparing every stored pHash (what `SqlImageStore.near` did before),
on SQLite and PostgreSQL databases holding 10k and 100k images.

Stored hashes: half uniform random 64-bit values, half near copies (8 to 20 bits flipped) of 200
"templates", because real pHashes cluster (screenshots of one app, memes on one picture) and a
cluster is what fills a band's candidate list. Probes: 50 re-posts of stored images (0 to 6 bits
flipped) and 50 unrelated hashes. Both lookups must return the same images; the numbers are the
mean wall and CPU milliseconds per lookup and the mean number of candidate rows the band filter
lets through.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert, select

from bench import pg_cluster
from storage.db import Database
from storage.images import BAND_NAMES, SqlImageStore, band_filter, phash_bands
from storage.models import ImageRow

Log = Callable[[str], None]
SIZES = (10_000, 100_000)
DISTANCE = 10  # ImagesConfig.hash_distance's default
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _flip(rng: random.Random, value: int, low: int, high: int) -> int:
    return value ^ sum(1 << bit for bit in rng.sample(range(64), rng.randint(low, high)))


def stored_hashes(rng: random.Random, count: int) -> list[int]:
    templates = [rng.getrandbits(64) for _ in range(200)]
    uniform = [rng.getrandbits(64) for _ in range(count // 2)]
    clustered = [_flip(rng, rng.choice(templates), 8, 20) for _ in range(count - count // 2)]
    return uniform + clustered


def fill(db: Database, hashes: Sequence[int]) -> None:
    phashes = [f"{value:016x}" for value in hashes]
    rows = [
        {
            "sha256": f"{number:064x}",
            "phash": phash,
            "source": f"bench:{number}",
            "seen_at": NOW,
            **dict(zip(BAND_NAMES, phash_bands(phash), strict=True)),
        }
        for number, phash in enumerate(phashes)
    ]
    with db.session() as session:
        for start in range(0, len(rows), 5000):
            session.execute(insert(ImageRow), rows[start : start + 5000])
        session.commit()


def full_scan(db: Database, phash: str, max_distance: int) -> set[str]:
    """The lookup before migration 0012: every stored hash compared in Python."""
    probe = int(phash, 16)
    with db.session() as session:
        hashes = session.execute(select(ImageRow.sha256, ImageRow.phash)).all()
    return {sha for sha, h in hashes if (probe ^ int(h, 16)).bit_count() <= max_distance}


def candidates(db: Database, phash: str, max_distance: int) -> int:
    narrowed = band_filter(phash, max_distance)
    assert narrowed is not None
    with db.session() as session:
        return len(session.execute(select(ImageRow.sha256).where(narrowed)).all())


def _timed(
    lookup: Callable[[str], set[str]], probes: Sequence[str]
) -> tuple[float, float, list[set[str]]]:
    """Wall and CPU milliseconds per lookup (CPU time is what a loaded machine distorts least:
    SQLite runs in this process), and what each lookup found."""
    found = []
    start, cpu = time.perf_counter(), time.process_time()
    for probe in probes:
        found.append(lookup(probe))
    wall_ms = (time.perf_counter() - start) / len(probes) * 1000
    return wall_ms, (time.process_time() - cpu) / len(probes) * 1000, found


def one_size(size: int, url: str, label: str, log: Log) -> dict[str, float]:
    """Both lookups on a fresh database at `url` holding `size` images. CPU time is this
    process's: all of SQLite's work, only the client's share on PostgreSQL."""
    rng = random.Random(size)
    hashes = stored_hashes(rng, size)
    db = Database(url)
    try:
        fill(db, hashes)
        probes = [f"{_flip(rng, rng.choice(hashes), 0, 6):016x}" for _ in range(50)]
        probes += [f"{rng.getrandbits(64):016x}" for _ in range(50)]
        store = SqlImageStore(db)
        scan_ms, scan_cpu, by_scan = _timed(lambda p: full_scan(db, p, DISTANCE), probes)
        band_ms, band_cpu, by_band = _timed(
            lambda p: {seen.sha256 for seen, _ in store.near(p, DISTANCE)}, probes
        )
        if by_scan != by_band:
            raise AssertionError(f"{label} {size}: the band lookup and the full scan disagree")
        through = statistics.mean(candidates(db, p, DISTANCE) for p in probes)
    finally:
        db.dispose()
    hits = sum(bool(found) for found in by_band)
    log(
        f"{label}, {size} images: full scan {scan_ms:.1f} ms ({scan_cpu:.1f} ms CPU), band "
        f"index {band_ms:.2f} ms ({band_cpu:.2f} ms CPU) per lookup ({scan_ms / band_ms:.0f}x "
        f"by wall time), {through:.0f} candidate rows on average, "
        f"{hits}/{len(probes)} probes matched, same results"
    )
    return {
        f"{label}_scan_ms_{size}": round(scan_ms, 2),
        f"{label}_band_ms_{size}": round(band_ms, 3),
        f"{label}_scan_cpu_ms_{size}": round(scan_cpu, 2),
        f"{label}_band_cpu_ms_{size}": round(band_cpu, 3),
        f"{label}_candidates_{size}": round(through, 1),
    }


def run(
    log: Log = print, *, sizes: Sequence[int] = SIZES, postgres: bool = True
) -> dict[str, float]:
    """SQLite always; PostgreSQL on a throwaway cluster (`bench.pg_cluster`) when asked for
    and its binaries are installed."""
    numbers: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            url = f"sqlite:///{Path(folder) / f'images-{size}.db'}"
            numbers.update(one_size(size, url, "sqlite", log))
    if postgres and pg_cluster.available():
        with pg_cluster.cluster() as server:
            for size in sizes:
                url = pg_cluster.fresh_database(server, f"images_{size}")
                numbers.update(one_size(size, url, "postgresql", log))
    return numbers


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
