"""Write an `eval posts` file from HealthVer dev claims (read from ../shared/data, never copied
into the repository): one post per distinct claim, with its gold verdict.

HealthVer labels a claim against one evidence passage; a claim with several passages can carry
several labels, so only claims whose labels agree are kept. Supports → supported, Refutes →
refuted, Neutral → not_enough_evidence (the passage neither confirms nor denies it). The
post/label shape follows MUSE's and EvoNote's (MM-HealthCN) records; HealthVer has no post
dates, so every post is dated `--date` (replay then admits only sources older than it).

    python -m bench.eval_posts_data OUT.jsonl [--limit N] [--date 2021-06-01]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "healthver" / "healthver_dev.csv"
GOLD = {"Supports": "supported", "Refutes": "refuted", "Neutral": "not_enough_evidence"}


def posts(path: Path, *, limit: int, date: str, seed: int = 0) -> list[dict[str, object]]:
    labels: dict[str, set[str]] = defaultdict(set)
    ids: dict[str, str] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            claim = " ".join(row["claim"].split())
            labels[claim].add(row["label"])
            ids.setdefault(claim, row["id"])
    agreed = sorted(c for c, found in labels.items() if len(found) == 1)
    random.Random(seed).shuffle(agreed)
    return [
        {
            "id": f"healthver-{ids[claim]}",
            "author": "healthver",
            "text": claim,
            "created_at": f"{date}T12:00:00+00:00",
            "gold": GOLD[next(iter(labels[claim]))],
        }
        for claim in agreed[:limit]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--date", default="2021-06-01")
    args = parser.parse_args(argv)
    rows = posts(args.data, limit=args.limit, date=args.date)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} posts written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
