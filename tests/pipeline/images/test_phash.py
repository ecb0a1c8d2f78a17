"""Near duplicates by pHash: match rates per alteration on generated and real pictures, false
positives on unrelated pairs, and the store of images seen before."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import combinations

from PIL import Image

from pipeline.claims.index import ClaimRecord
from pipeline.claims.ratings import Rating
from pipeline.config import ImagesConfig
from pipeline.images.phash import MemoryImageStore, SeenImage, distance, phash
from testing.image_samples import ALTERATIONS, meme, photo, scene, screenshot

THRESHOLD = ImagesConfig().hash_distance
NOW = datetime(2026, 11, 29, tzinfo=UTC)
# Re-shares of the same picture: these must all match.
RESHARES = ("resize 50%", "resize 25%", "jpeg q30", "resize 50% + jpeg q60", "grayscale")


def pictures() -> dict[str, Image.Image]:
    return {
        "china.jpg": photo("china.jpg"),
        "flower.jpg": photo("flower.jpg"),
        "screenshot": screenshot("Daily Health News", "@dailyhealth", ["5G spreads the virus"]),
        "meme": meme("VACCINES CONTAIN", "MICROCHIPS"),
        **{f"scene {seed}": scene(seed) for seed in range(1, 5)},
    }


def test_match_rates_per_alteration_and_no_false_positives_on_unrelated_pairs() -> None:
    images = pictures()
    hashes = {name: phash(image) for name, image in images.items()}
    rates: dict[str, int] = {}
    worst: dict[str, int] = {}
    for alteration, alter in ALTERATIONS.items():
        distances = [distance(hashes[name], phash(alter(image))) for name, image in images.items()]
        rates[alteration] = sum(d <= THRESHOLD for d in distances)
        worst[alteration] = max(distances)
    unrelated = [distance(hashes[a], hashes[b]) for a, b in combinations(hashes, 2)]
    false_positives = sum(d <= THRESHOLD for d in unrelated)
    print(f"\npHash <= {THRESHOLD}: matches of {len(images)} per alteration (max distance)")
    for alteration in ALTERATIONS:
        print(f"  {alteration:24} {rates[alteration]}/{len(images)} ({worst[alteration]})")
    print(
        f"  unrelated pairs: {false_positives}/{len(unrelated)} false positives, "
        f"min distance {min(unrelated)}"
    )
    assert all(rates[name] == len(images) for name in RESHARES), rates
    assert false_positives == 0
    assert min(unrelated) > THRESHOLD + 4  # a margin, not a coin flip at the threshold


def test_the_hash_is_taken_on_a_small_copy_so_size_does_not_change_it() -> None:
    image = photo("china.jpg")
    big = image.resize((image.width * 3, image.height * 3))
    assert distance(phash(image), phash(big)) <= 2
    assert len(phash(image)) == 16


def test_the_store_keeps_each_image_once_and_a_fact_check_attaches_later() -> None:
    store = MemoryImageStore()
    first = SeenImage(sha256="a" * 64, phash="8f373714acfcf4d0", source="post:1", seen_at=NOW)
    store.add(first)
    store.add(SeenImage(sha256="a" * 64, phash="8f373714acfcf4d0", source="post:2", seen_at=NOW))
    assert len(store) == 1
    assert store.near("8f373714acfcf4d0", 0)[0][0].source == "post:1"
    review = ClaimRecord(
        claim_text="A photo of a flood", review_url="https://fc.example/flood", rating=Rating.FALSE
    )
    store.add(
        SeenImage(
            sha256="a" * 64,
            phash="8f373714acfcf4d0",
            source="fc",
            seen_at=NOW,
            fact_check=review.model_dump(mode="json"),
        )
    )
    [(seen, dist)] = store.near("8f373714acfcf4d1", 1)
    assert seen.fact_check is not None and dist == 1
    assert ClaimRecord.model_validate(seen.fact_check) == review


def test_near_returns_the_nearest_first_and_nothing_past_the_distance() -> None:
    store = MemoryImageStore(
        [
            SeenImage(sha256="1", phash="0000000000000000", source="one", seen_at=NOW),
            SeenImage(sha256="2", phash="000000000000000f", source="two", seen_at=NOW),
            SeenImage(sha256="3", phash="ffffffffffffffff", source="three", seen_at=NOW),
        ]
    )
    found = store.near("0000000000000001", 10)
    assert [(seen.source, d) for seen, d in found] == [("one", 1), ("two", 3)]
