"""Near-duplicate images: pHash against the learned embedding (EfficientNet-Lite0), per
alteration, and the embedding's cosine threshold calibrated by cross-validation.

The pairs are generated (`testing.image_samples`): originals are the two real photos in
scikit-learn's wheel, Pillow-rendered tweet-like screenshots and memes (different text on the
same template, the hard case) and generated scenes; each original is altered the ways a
re-shared picture is (resizes, JPEG recompression, crops to 90/75/60 %, a caption bar, a border,
a mirror image, grayscale). A positive pair is (original, its altered copy); a negative pair is
(original, another original or an altered copy of another original) - a stored image against an
incoming post that is not it.

Calibration: the originals are split into `FOLDS` groups; for each, the threshold is chosen on
the pairs that involve no image of that group (the lowest cosine whose precision there is at
least `TARGET_PRECISION`, else the one with the best F1) and scored on the pairs whose stored
image is in the group. The held-out precision decides whether an embedding match may stand in
for a pHash match (a templated reply) or is only a "possible match" for moderators.

Prints the per-alteration table, false positives on unrelated pairs by kind, the folds and the
precision/recall curve; writes the curve as an HTML page (`bench/results/image_similarity.html`).
"""

from __future__ import annotations

import base64
import io
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image

from pipeline.config import ImagesConfig
from pipeline.images.embedding import EfficientNetLite0Embedder, ImageEmbedder, cosine
from pipeline.images.phash import distance, phash
from pipeline.images.reader import text_agreement

Log = Callable[[str], None]
FOLDS = 5
TARGET_PRECISION = 0.98
CHART = Path(__file__).resolve().parent / "results" / "image_similarity.html"
TEXT_KINDS = frozenset({"screenshot", "meme"})  # originals with rendered text
CURVE_POINTS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98)


@dataclass(frozen=True)
class Original:
    name: str
    kind: str  # photo, scene, screenshot or meme
    image: Image.Image


@dataclass(frozen=True)
class Pair:
    stored: str  # the original's name
    probe: str  # the other original's name (the same for a positive pair)
    alteration: str  # "" for an unaltered original
    positive: bool
    cos: float
    hash_distance: int


@dataclass(frozen=True)
class Fold:
    threshold: float
    met_target: bool  # the training pairs reached TARGET_PRECISION at that threshold
    precision: float  # held out
    recall: float
    positives: int
    negatives: int


def originals(small: bool = False) -> list[Original]:
    """The pictures pairs are made of; `small` keeps one of each kind (tests)."""
    from testing import image_samples as s

    found = [
        Original("china.jpg", "photo", s.photo("china.jpg")),
        Original("flower.jpg", "photo", s.photo("flower.jpg")),
        Original(
            "shot health", "screenshot", s.screenshot("Daily Health", "@dh", ["5G spreads it"])
        ),
        Original("meme vaccines", "meme", s.meme("VACCINES CONTAIN", "MICROCHIPS")),
        Original("scene 1", "scene", s.scene(1)),
    ]
    if small:
        return found
    return [
        *found,
        Original(
            "shot moon",
            "screenshot",
            s.screenshot("World Report", "@worldrep", ["Moon landing staged", "says insider"]),
        ),
        Original(
            "shot water",
            "screenshot",
            s.screenshot("Local News 24", "@ln24", ["Tap water banned", "from Monday"]),
        ),
        Original("meme earth", "meme", s.meme("THE EARTH", "IS FLAT", seed=3)),
        Original("meme climate", "meme", s.meme("CLIMATE CHANGE", "IS A HOAX", seed=11)),
        *(Original(f"scene {seed}", "scene", s.scene(seed)) for seed in range(2, 7)),
    ]


def alterations() -> dict[str, Callable[[Image.Image], Image.Image]]:
    from testing.image_samples import ALTERATIONS

    return dict(ALTERATIONS)


def make_pairs(
    pictures: Sequence[Original],
    embedder: ImageEmbedder,
    alters: dict[str, Callable[[Image.Image], Image.Image]],
    hash_side: int = ImagesConfig().hash_side,
) -> list[Pair]:
    """Every (stored original, probe) pair with its cosine and pHash distance."""
    vectors = {p.name: embedder.embed(p.image) for p in pictures}
    hashes = {p.name: phash(p.image, hash_side) for p in pictures}
    probes: list[tuple[str, str, object, str]] = [
        (p.name, "", vectors[p.name], hashes[p.name]) for p in pictures
    ]
    for picture in pictures:
        for name, alter in alters.items():
            altered = alter(picture.image)
            probes.append((picture.name, name, embedder.embed(altered), phash(altered, hash_side)))
    pairs = []
    for stored in pictures:
        for probe, alteration, vector, probe_hash in probes:
            if probe == stored.name and not alteration:
                continue  # an image against itself
            if probe < stored.name and not alteration:
                continue  # unaltered originals: each unordered pair once
            pairs.append(
                Pair(
                    stored=stored.name,
                    probe=probe,
                    alteration=alteration,
                    positive=probe == stored.name,
                    cos=cosine(vectors[stored.name], vector),  # type: ignore[arg-type]
                    hash_distance=distance(hashes[stored.name], probe_hash),
                )
            )
    return pairs


def precision_recall(pairs: Sequence[Pair], threshold: float) -> tuple[float, float]:
    """Precision and recall of "cosine >= threshold" on `pairs` (precision 1.0 with no hit)."""
    hits = [p for p in pairs if p.cos >= threshold]
    true = sum(p.positive for p in hits)
    positives = sum(p.positive for p in pairs)
    return (true / len(hits) if hits else 1.0, true / positives if positives else 0.0)


def choose_threshold(pairs: Sequence[Pair], target: float | None) -> tuple[float, bool]:
    """With a `target`: the lowest cosine (of those seen) at which precision reaches it, and
    True. Without one, or when no cosine reaches it: the cosine with the best F1, and False."""
    candidates = sorted({round(p.cos, 4) for p in pairs})
    best, best_f1 = candidates[-1] if candidates else 1.0, -1.0
    for threshold in candidates:
        precision, recall = precision_recall(pairs, threshold)
        if target is not None and precision >= target and recall > 0:
            return threshold, True
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if f1 > best_f1:
            best, best_f1 = threshold, f1
    return best, False


def _held(names: Sequence[str], k: int, folds: int) -> set[str]:
    return {name for i, name in enumerate(names) if i % folds == k}


def cross_validate(
    pairs: Sequence[Pair], names: Sequence[str], folds: int, target: float | None
) -> list[Fold]:
    """Per group of originals: the threshold chosen on the pairs that involve none of its
    images, scored on the pairs whose stored image is one of them."""
    result = []
    for k in range(folds):
        held = _held(names, k, folds)
        train = [p for p in pairs if p.stored not in held and p.probe not in held]
        test = [p for p in pairs if p.stored in held]
        threshold, met = choose_threshold(train, target)
        precision, recall = precision_recall(test, threshold)
        result.append(
            Fold(
                threshold=threshold,
                met_target=met,
                precision=precision,
                recall=recall,
                positives=sum(p.positive for p in test),
                negatives=sum(not p.positive for p in test),
            )
        )
    return result


def pooled(
    pairs: Sequence[Pair], names: Sequence[str], folds: Sequence[Fold]
) -> tuple[float, float]:
    """Held-out precision and recall over all folds together (each with its own threshold)."""
    tp = fp = fn = 0
    for k, fold in enumerate(folds):
        for p in (p for p in pairs if p.stored in _held(names, k, len(folds))):
            hit = p.cos >= fold.threshold
            tp += hit and p.positive
            fp += hit and not p.positive
            fn += (not hit) and p.positive
    return (tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 0.0)


def _log_folds(name: str, folds: Sequence[Fold], log: Log) -> None:
    for k, fold in enumerate(folds):
        rule = "precision target met" if fold.met_target else "best F1"
        log(
            f"{name} fold {k}: threshold {fold.threshold:.3f} ({rule} on training), held out "
            f"precision {fold.precision:.3f} recall {fold.recall:.3f} "
            f"({fold.positives} positive, {fold.negatives} negative pairs)"
        )


def _chart(pairs: Sequence[Pair]) -> str:
    """The precision/recall curve as a self-contained HTML page (an inline PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    thresholds = sorted({round(p.cos, 3) for p in pairs})
    points = [precision_recall(pairs, t) for t in thresholds]
    figure, axes = plt.subplots(figsize=(6, 4.5))
    axes.plot([r for _, r in points], [p for p, _ in points], marker=".", linewidth=1)
    for t in (0.8, 0.9, 0.95):
        precision, recall = precision_recall(pairs, t)
        axes.annotate(f"cos {t}", (recall, precision), fontsize=8)
    axes.set_xlabel("recall (altered copies found)")
    axes.set_ylabel("precision")
    axes.set_title("EfficientNet-Lite0 cosine: generated pairs")
    axes.grid(alpha=0.3)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=100, bbox_inches="tight")
    plt.close(figure)
    data = base64.b64encode(out.getvalue()).decode("ascii")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>Image similarity: precision/recall</title></head><body>"
        f'<img alt="precision against recall" src="data:image/png;base64,{data}"></body></html>'
    )


@dataclass(frozen=True)
class Calibration:
    threshold: float  # median of the best-F1 folds' thresholds: the possible-match level
    precision: float  # held out, pooled, at each fold's best-F1 threshold
    recall: float
    strict_precision: float  # held out, pooled, at each fold's precision-first threshold
    strict_recall: float


def calibrate(pairs: Sequence[Pair], names: Sequence[str], label: str, log: Log) -> Calibration:
    folds = min(FOLDS, len(names))
    strict = cross_validate(pairs, names, folds, TARGET_PRECISION)
    loose = cross_validate(pairs, names, folds, None)
    _log_folds(f"{label}, precision >= {TARGET_PRECISION}", strict, log)
    _log_folds(f"{label}, best F1", loose, log)
    strict_precision, strict_recall = pooled(pairs, names, strict)
    precision, recall = pooled(pairs, names, loose)
    result = Calibration(
        threshold=round(statistics.median(f.threshold for f in loose), 2),
        precision=precision,
        recall=recall,
        strict_precision=strict_precision,
        strict_recall=strict_recall,
    )
    log(
        f"{label}, held out, pooled: precision-first rule {strict_precision:.3f} precision "
        f"{strict_recall:.3f} recall; best-F1 rule {precision:.3f} precision {recall:.3f} "
        f"recall (median threshold {result.threshold:.2f})"
    )
    return result


def _rates(
    pairs: Sequence[Pair], threshold: float, hash_max: int, gated: Callable[[Pair], bool], log: Log
) -> None:
    """Matches per alteration: pHash, the embedding alone, and the two stages as the pipeline
    runs them (the embedding where pHash missed; neither where both texts differ)."""
    order = list(alterations())
    alters = sorted({p.alteration for p in pairs if p.positive}, key=order.index)
    by_hash_title, by_cos_title = f"pHash<={hash_max}", f"cos>={threshold:.2f}"
    log(f"{'alteration':24} {by_hash_title:>10} {by_cos_title:>10} {'two-stage':>10}  min cos")
    for alteration in alters:
        group = [p for p in pairs if p.positive and p.alteration == alteration]
        by_hash = sum(p.hash_distance <= hash_max for p in group)
        by_cos = sum(p.cos >= threshold for p in group)
        either = sum(
            gated(p) and (p.hash_distance <= hash_max or p.cos >= threshold) for p in group
        )
        n = len(group)
        log(
            f"{alteration:24} {f'{by_hash}/{n}':>10} {f'{by_cos}/{n}':>10} {f'{either}/{n}':>10}"
            f"  {min(p.cos for p in group):.3f}"
        )


def _false_positives(
    pairs: Sequence[Pair],
    kind: dict[str, str],
    threshold: float,
    hash_max: int,
    gated: Callable[[Pair], bool],
    log: Log,
) -> dict[str, float]:
    """Unrelated pairs matched, by the kind of picture both sides are (the hard negatives are
    two screenshots of one template or two memes on one texture): by pHash, by the embedding
    alone where pHash missed, and by the embedding stage as run (probes without text)."""
    numbers: dict[str, float] = {}
    negatives = [p for p in pairs if not p.positive]
    for name in ("photo", "scene", "screenshot", "meme", "mixed"):
        same = [
            p
            for p in negatives
            if (kind[p.stored] == kind[p.probe] == name)
            or (name == "mixed" and kind[p.stored] != kind[p.probe])
        ]
        if not same:
            continue
        by_hash = sum(p.hash_distance <= hash_max for p in same)
        alone = sum(p.hash_distance > hash_max and p.cos >= threshold for p in same)
        stage = sum(gated(p) and (p.hash_distance <= hash_max or p.cos >= threshold) for p in same)
        log(
            f"unrelated {name} pairs: pHash {by_hash}/{len(same)}, embedding alone (where pHash "
            f"missed) {alone}, both stages as run (text check) {stage}"
        )
        numbers[f"fp_rate_phash_{name}"] = round(by_hash / len(same), 4)
        numbers[f"fp_rate_embedding_alone_{name}"] = round(alone / len(same), 4)
        numbers[f"fp_rate_as_run_{name}"] = round(stage / len(same), 4)
    return numbers


def ocr_texts(
    pictures: Sequence[Original], alters: dict[str, Callable[[Image.Image], Image.Image]], log: Log
) -> dict[tuple[str, str], str]:
    """OCR text by (original, alteration), "" for the original itself: every copy of the
    screenshots and memes, and the caption-bar copy of the others (their only text)."""
    from pipeline.images.ocr import get_ocr

    engine = get_ocr(ImagesConfig())
    start = time.perf_counter()
    texts: dict[tuple[str, str], str] = {}
    for picture in pictures:
        names = ["", *alters] if picture.kind in TEXT_KINDS else ["", "caption bar"]
        for name in names:
            image = alters[name](picture.image) if name else picture.image
            texts[(picture.name, name)] = engine.read(image).text
    log(f"{len(texts)} images read by OCR in {time.perf_counter() - start:.1f} s")
    return texts


def run(log: Log = print, *, small: bool = False, chart: bool = True) -> dict[str, float]:
    cfg = ImagesConfig()
    hash_max = cfg.hash_distance
    pictures = originals(small)
    kind = {p.name: p.kind for p in pictures}
    start = time.perf_counter()
    pairs = make_pairs(pictures, EfficientNetLite0Embedder(cfg.embedding_side), alterations())
    seconds = time.perf_counter() - start
    images = len(pictures) * (1 + len(alterations()))
    log(f"{len(pictures)} originals, {images} images embedded in {seconds:.1f} s")
    names = [p.name for p in pictures]
    texts = ocr_texts(pictures, alterations(), log)

    def agreement(p: Pair) -> float | None:
        stored, probe = texts.get((p.stored, ""), ""), texts.get((p.probe, p.alteration), "")
        return text_agreement(stored, probe, cfg.min_text_chars)

    # The text check first: the pairs where both pictures carry text, scored by agreement.
    text_pairs = [replace(p, cos=a) for p in pairs if (a := agreement(p)) is not None]
    text = calibrate(text_pairs, names, "OCR text agreement", log)

    def gated(p: Pair) -> bool:  # not two pictures whose texts differ
        found = agreement(p)
        return found is None or found >= text.threshold

    # The embedding is the second stage: calibrated on the pairs pHash does not match and the
    # text check lets through.
    second = [p for p in pairs if p.hash_distance > hash_max]
    calibrate(second, names, "embedding, no text check", log)
    stage = [p for p in second if gated(p)]
    found = calibrate(stage, names, "embedding after the text check", log)
    _rates(pairs, found.threshold, hash_max, gated, log)
    numbers = _false_positives(pairs, kind, found.threshold, hash_max, gated, log)
    log("precision/recall of the embedding stage (pairs pHash missed, after the text check):")
    for t in CURVE_POINTS:
        precision, recall = precision_recall(stage, t)
        log(f"  cos >= {t:.2f}: precision {precision:.3f} recall {recall:.3f}")
    if chart:
        CHART.parent.mkdir(parents=True, exist_ok=True)
        CHART.write_text(_chart(stage), encoding="utf-8")
        log(f"chart written to {CHART}")
    positives = [p for p in pairs if p.positive]

    def share(hits: int, of: int) -> float:
        return round(hits / of, 4) if of else 0.0

    def as_run(p: Pair) -> bool:
        return gated(p) and (p.hash_distance <= hash_max or p.cos >= found.threshold)

    return {
        "pairs_positive": float(len(positives)),
        "pairs_negative": float(len(pairs) - len(positives)),
        "embed_s_per_image": round(seconds / images, 4),
        "text_agreement_threshold": text.threshold,
        "text_heldout_precision": round(text.precision, 4),
        "text_heldout_recall": round(text.recall, 4),
        "threshold_possible": found.threshold,
        "heldout_precision_possible": round(found.precision, 4),
        "heldout_recall_possible": round(found.recall, 4),
        "heldout_precision_strict": round(found.strict_precision, 4),
        "heldout_recall_strict": round(found.strict_recall, 4),
        "auto_match_allowed": float(
            found.strict_precision >= TARGET_PRECISION and found.strict_recall > 0
        ),
        "recall_phash": share(sum(p.hash_distance <= hash_max for p in positives), len(positives)),
        "recall_as_run": share(sum(as_run(p) for p in positives), len(positives)),
        **numbers,
    }


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
