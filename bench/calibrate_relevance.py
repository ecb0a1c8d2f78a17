"""Calibrate and measure passage relevance (`RelevanceConfig`) on the HealthVer dev split.

HealthVer pairs COVID-19 claims with passages of scientific abstracts. It groups claims by
topic (`topic_ip`, one research question per topic: "what is the origin of COVID-19"), and
labels each pair Supports, Refutes or Neutral; evidence is gathered per topic, so a Neutral pair
is evidence about the claim's topic that does not speak to the claim itself. Hence:

* positives: each claim with its own Supports or Refutes evidence;
* same-topic negatives: the claim with evidence of the same topic that the dataset pairs only
  with other claims (up to `negatives` per claim, fixed seed) - "evidence for another claim
  about the same subject", the case that plain cosine handles worst;
* other-topic negatives: the claim with evidence of other topics (same count, fixed seed);
* the claim's own Neutral evidence is reported as a third negative set.

The pipeline scores a page against a post and what the analysis took from it. HealthVer has no
posts, so each claim is made into two kinds of post (partners drawn with a fixed seed):

* `two_claims`: the claim followed by another claim on the same topic (a topic with one claim
  gives a one-claim post); both are the post's claims, evidence for either is a positive;
* `aside`: the claim followed by a sentence on another topic that the analysis does not take as
  a claim (what posts carry besides their claim); evidence of that other topic is left out.

Four ways of choosing the texts a passage is scored against are compared, each
scored exactly as the pipeline scores (`split_passages`, `score_encoded`: best passage, best
query text):

* `post`: the whole post only;
* `post+claims`: the post and each claim (what the pipeline did before `relevance_texts`);
* `claims`: each claim, the post only when there are none (`relevance_texts`, the default);
* `claims+questions`: each claim and the topic's research question.

The passage threshold is chosen by cross-validation over topics (scikit-learn `GroupKFold`, so
no topic is on both sides): on each fold's training topics, the highest threshold keeping
recall >= 0.90 (lost evidence cannot be recovered later, a few extra passages cost little);
the held-out topics give its recall and how many negatives pass; `passage_threshold` is what
the rule picks on all topics. The F1-optimal page threshold against all negatives is printed
too, for reference only: `page_threshold` keeps its earlier calibration against other-topic
evidence, since same-topic evidence that the page threshold would drop is what the extractor
is there to judge.

Measured (seed 13): AUC same-topic / other-topic / Neutral negatives -
two_claims: post 0.599 / 0.865 / 0.687, post+claims 0.588 / 0.862 / 0.674, claims 0.585 /
0.858 / 0.667, claims+questions 0.577 / 0.875 / 0.543; aside: post 0.605 / 0.818 / 0.664,
post+claims 0.622 / 0.854 / 0.696, claims 0.631 / 0.877 / 0.717, claims+questions 0.585 /
0.886 / 0.554. Passage threshold 0.34 (folds 0.342 ± 0.013, held-out recall 0.904): recall
0.909, same-topic negatives passing 0.92, other-topic 0.53 (at the earlier 0.24: 0.966, 0.97,
0.77). Same-topic evidence stays hard for the embedding: it is the extractor's to reject.

The lexical pre-filter (`RelevanceConfig.prefilter_passages`) never touches these pairs (an
evidence is one passage), so it is measured by putting each two-claim pair's evidence inside a
made-up page of 20 passages (`place_in_pages`) and scoring only what the pre-filter keeps.
Measured (seed 13): positives the extractor is shown (kept, among the page's best 3, over the
passage threshold) 0.609 with every passage encoded; keeping 3 / 4 / 6 / 8 / 10 passages: 0.520
/ 0.547 / 0.586 / 0.596 / 0.605. Evidence kept at all: 0.536 / 0.594 / 0.689 / 0.764 / 0.836 (a
dropped passage is never scored, so the 0.90 recall floor cannot be met at any threshold).

Usage: python -m bench.calibrate_relevance [--data CSV] [--negatives N] [--json]
"""

from __future__ import annotations

import csv
import json
import random
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from bench import dataset_parser  # noqa: E402
from pipeline.config import RelevanceConfig  # noqa: E402
from pipeline.relevance.prefilter import lexical_order  # noqa: E402
from pipeline.relevance.scoring import (  # noqa: E402
    Embedder,
    EncodedPage,
    get_embedder,
    relevance_texts,
    score_encoded,
    split_passages,
)

DEFAULT_DATA = REPO.parent / "shared" / "data" / "healthver" / "healthver_dev.csv"
RECALL_FLOOR = 0.90
FOLDS = 5
SEED = 13
NEGATIVES = 8
VARIANTS = ("post", "post+claims", "claims", "claims+questions")
CHOSEN = "claims"  # what `relevance_texts` does
KINDS = ("same_topic", "other_topic", "neutral")
THRESHOLDS = np.round(np.arange(0.0, 0.901, 0.01), 2)
# The made-up page an evidence passage sits in for the pre-filter measurement (fixture pages
# split into 19 passages on average), and the pre-filter sizes compared.
PAGE_PASSAGES = 20
PREFILTER_SIZES = (2, 3, 4, 5, 6, 8, 10)

Log = Callable[[str], None]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Post:
    """A made-up post: its text, the claims in it and its topic's question."""

    text: str
    claims: tuple[str, ...]
    question: str
    topic: str


@dataclass(frozen=True)
class Pair:
    post: int  # index into the post list
    evidence: str
    kind: str  # "positive" or one of KINDS


@dataclass
class Corpus:
    posts: list[Post]
    pairs: list[Pair]

    def topics(self) -> list[str]:
        return [self.posts[p.post].topic for p in self.pairs]


@dataclass(frozen=True)
class FoldThreshold:
    fold: int
    passage: float
    page: float
    recall: float  # held-out positives at or above the passage threshold
    passing: dict[str, float] = field(default_factory=dict)  # kind -> share of negatives passing


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [{k: (v or "").strip() for k, v in r.items()} for r in csv.DictReader(handle)]
    if not rows:
        raise SystemExit(f"no rows in {path}")
    return rows


@dataclass
class HealthVer:
    """The dev split indexed by claim and topic."""

    topic_of: dict[str, str] = field(default_factory=dict)  # claim -> topic, file order
    question: dict[str, str] = field(default_factory=dict)  # topic -> its research question
    speaks: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # S/R evidence
    neutral: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    by_topic: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    claims_of: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def index_rows(rows: Sequence[dict[str, str]]) -> HealthVer:
    data = HealthVer()
    for r in rows:
        claim, evidence, topic = r["claim"], r["evidence"], r["topic_ip"]
        if claim not in data.topic_of:
            data.topic_of[claim] = topic
            data.claims_of[topic].append(claim)
        data.question.setdefault(topic, r.get("question", ""))
        (data.neutral if r["label"] == "Neutral" else data.speaks)[claim].add(evidence)
        if evidence not in data.by_topic[topic]:
            data.by_topic[topic].append(evidence)
    return data


def build_corpus(
    rows: Sequence[dict[str, str]], negatives: int, seed: int, *, aside: bool = False
) -> Corpus:
    """Posts and their labelled evidence pairs (see the module docstring). `aside`: the post is
    a claim plus a sentence on another topic that the analysis does not take as a claim."""
    data = index_rows(rows)
    rng = random.Random(seed)
    posts: list[Post] = []
    pairs: list[Pair] = []
    for claim, topic in data.topic_of.items():
        if aside:
            extra = rng.choice([c for c, t in data.topic_of.items() if t != topic])
            claims: tuple[str, ...] = (claim,)
            skip_topics = {topic, data.topic_of[extra]}
            text = f"{claim} {extra}"
        else:
            others = [c for c in data.claims_of[topic] if c != claim]
            claims = (claim, rng.choice(others)) if others else (claim,)
            skip_topics = {topic}
            text = " ".join(claims)
        index = len(posts)
        posts.append(Post(text, claims, data.question[topic], topic))
        relevant = set().union(*(data.speaks[c] for c in claims))
        paired = set().union(*(data.speaks[c] | data.neutral[c] for c in claims))
        pairs.extend(Pair(index, e, "positive") for e in sorted(relevant))
        pairs.extend(Pair(index, e, "neutral") for e in sorted(data.neutral[claim] - relevant))
        same = [e for e in data.by_topic[topic] if e not in paired]
        other = [e for t, evs in data.by_topic.items() if t not in skip_topics for e in evs]
        for kind, pool in (("same_topic", same), ("other_topic", other)):
            pairs.extend(Pair(index, e, kind) for e in rng.sample(pool, min(negatives, len(pool))))
    return Corpus(posts, pairs)


def query_texts(post: Post, variant: str) -> list[str]:
    if variant == "post":
        return [post.text]
    if variant == "post+claims":
        return [post.text, *post.claims]
    if variant == "claims":
        return relevance_texts([post.text], post.claims)
    if variant == "claims+questions":
        with_questions = RelevanceConfig(score_questions=True)
        return relevance_texts([post.text], post.claims, [post.question], with_questions)
    raise ValueError(f"unknown variant {variant!r}")


def _encode(
    embedder: Embedder, texts: Sequence[str], cache: dict[str, Floats], batch: int = 64
) -> dict[str, Floats]:
    """`cache` with every text of `texts` in it (the two corpora share their evidence)."""
    missing = sorted(set(texts) - set(cache))
    for i in range(0, len(missing), batch):
        chunk = missing[i : i + batch]
        cache.update(zip(chunk, embedder.encode(chunk).astype(np.float64), strict=True))
    return cache


def score_variants(
    embedder: Embedder,
    corpus: Corpus,
    cfg: RelevanceConfig,
    log: Log,
    cache: dict[str, Floats] | None = None,
) -> dict[str, Floats]:
    """Each pair's page score under each variant, via the pipeline's `score_encoded`."""
    evidences = sorted({p.evidence for p in corpus.pairs})
    passages = {e: split_passages(e, cfg.passage_words) for e in evidences}
    cache = {} if cache is None else cache
    log(f"encoding {sum(len(v) for v in passages.values())} passages")
    vectors = _encode(embedder, [s for v in passages.values() for s in v], cache)
    pages = {
        e: EncodedPage(url=e, passages=ps, vectors=np.vstack([vectors[s] for s in ps]))
        for e, ps in passages.items()
    }
    texts = {v: [query_texts(post, v) for post in corpus.posts] for v in VARIANTS}
    log("encoding posts, claims and questions")
    query_vectors = _encode(embedder, [t for ts in texts.values() for q in ts for t in q], cache)
    out: dict[str, Floats] = {}
    for variant in VARIANTS:
        matrices = [np.vstack([query_vectors[t] for t in q]) for q in texts[variant]]
        out[variant] = np.array(
            [
                score_encoded(pages[p.evidence], matrices[p.post].astype(np.float32), cfg).score
                for p in corpus.pairs
            ]
        )
    return out


@dataclass(frozen=True)
class Placement:
    """A pair's evidence as one passage of a made-up page."""

    page: list[str]
    at: int  # the evidence's position
    lexical: list[int]  # the page's positions, best by the lexical pre-filter first


def place_in_pages(rows: Sequence[dict[str, str]], corpus: Corpus, seed: int) -> list[Placement]:
    """Each pair's evidence put at a random position in a page of `PAGE_PASSAGES` passages
    (the rest: the topic's evidence that speaks to none of the post's claims, then other
    topics' - all of HealthVer is about COVID-19), ranked by the lexical pre-filter
    (`pipeline.relevance.prefilter`) against the post's text. The pipeline's pre-filter also has the
    search query, and real pages often carry the claim in several passages, so this is the
    harder case."""
    data = index_rows(rows)
    rng = random.Random(seed)
    everything = sorted({e for evs in data.by_topic.values() for e in evs})
    out: list[Placement] = []
    for pair in corpus.pairs:
        post = corpus.posts[pair.post]
        speaking = set().union(*(data.speaks[c] for c in post.claims)) | {pair.evidence}
        same = [e for e in data.by_topic[post.topic] if e not in speaking]
        page = rng.sample(same, min(len(same), PAGE_PASSAGES - 1))
        if len(page) < PAGE_PASSAGES - 1:
            taken = speaking | set(page)
            others = [e for e in everything if e not in taken]
            page += rng.sample(others, PAGE_PASSAGES - 1 - len(page))
        at = rng.randrange(len(page) + 1)
        page.insert(at, pair.evidence)
        out.append(Placement(page, at, lexical_order(page, [post.text])))
    return out


def _shown(placed: Placement, dense: Floats, size: int, cfg: RelevanceConfig) -> bool:
    """Whether the evidence is among the passages the extractor is shown: encoded (kept by
    a pre-filter of `size`; 0: all), among the best `passages_per_page`, over the threshold."""
    candidates = placed.lexical[:size] if size else placed.lexical
    best = sorted(candidates, key=lambda i: (-dense[i], i))[: cfg.passages_per_page]
    return placed.at in best and dense[placed.at] >= cfg.passage_threshold


def prefilter_effect(
    corpus: Corpus,
    scores: Floats,
    placements: Sequence[Placement],
    vectors: dict[str, Floats],
    cfg: RelevanceConfig,
    log: Log,
) -> dict[str, float]:
    """Per pre-filter size: AUC and cross-validated held-out recall when an evidence passage
    the pre-filter drops is never scored (score -1), and the share of positives the extractor
    is shown (`_shown`) against the share shown when every passage is encoded."""
    kinds = [p.kind for p in corpus.pairs]
    positive = np.array([k == "positive" for k in kinds])
    dense: dict[int, Floats] = {}
    for i in (int(j) for j in np.flatnonzero(positive)):
        pair, placed = corpus.pairs[i], placements[i]
        post = corpus.posts[pair.post]
        queries = np.vstack([vectors[q] for q in query_texts(post, CHOSEN)])
        dense[i] = (np.vstack([vectors[e] for e in placed.page]) @ queries.T).max(axis=1)
    numbers: dict[str, float] = {}
    for size in (0, *PREFILTER_SIZES):
        shown = statistics.fmean(_shown(placements[i], d, size, cfg) for i, d in dense.items())
        numbers[f"prefilter_{size}_evidence_shown"] = shown
        if not size:
            log(f"  every passage encoded: evidence shown {shown:.3f}")
            continue
        rank = np.array([p.lexical.index(p.at) for p in placements])
        kept = np.where(rank < size, scores, -1.0)
        aucs = {k: auc(kept, kinds, k) for k in KINDS}
        recall = statistics.fmean(f.recall for f in cross_validate(kept, kinds, corpus.topics()))
        at_configured = float((kept[positive] >= cfg.passage_threshold).mean())
        log(
            f"  pre-filter {size:2d} of {PAGE_PASSAGES}: evidence encoded "
            f"{(rank[positive] < size).mean():.3f}, shown {shown:.3f}; AUC "
            + ", ".join(f"{k} {v:.3f}" for k, v in aucs.items())
            + f"; held-out recall {recall:.3f}; recall at {cfg.passage_threshold:.2f}"
            f" {at_configured:.3f}"
        )
        numbers[f"prefilter_{size}_heldout_recall"] = recall
        numbers[f"prefilter_{size}_recall_at_configured"] = at_configured
        numbers.update({f"prefilter_{size}_auc_{k}": v for k, v in aucs.items()})
    return numbers


def auc(scores: Floats, kinds: Sequence[str], negative: str) -> float:
    picked = [i for i, k in enumerate(kinds) if k in ("positive", negative)]
    labels = [kinds[i] == "positive" for i in picked]
    return float(roc_auc_score(labels, scores[picked]))


def passage_rule(scores: Floats, positive: npt.NDArray[np.bool_]) -> float:
    """The highest threshold keeping recall >= RECALL_FLOOR."""
    recalls = [(scores[positive] >= t).mean() for t in THRESHOLDS]
    # None reaches the floor only when positives were never scored (the pre-filter dropped
    # them): then every scored passage is kept.
    reaching = [t for t, r in zip(THRESHOLDS, recalls, strict=True) if r >= RECALL_FLOOR]
    return float(max(reaching, default=0.0))


def page_rule(scores: Floats, positive: npt.NDArray[np.bool_]) -> float:
    """The F1-optimal threshold; ties to the higher one (same F1, fewer pages read)."""
    best = (-1.0, 0.0)
    for t in THRESHOLDS:
        predicted = scores >= t
        tp = int((predicted & positive).sum())
        fp = int((predicted & ~positive).sum())
        fn = int((~predicted & positive).sum())
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        best = max(best, (round(f1, 4), float(t)))
    return best[1]


def cross_validate(
    scores: Floats, kinds: Sequence[str], topics: Sequence[str], folds: int = FOLDS
) -> list[FoldThreshold]:
    """Thresholds chosen on training topics, measured on held-out topics."""
    positive = np.array([k == "positive" for k in kinds])
    kind_array = np.array(kinds)
    out: list[FoldThreshold] = []
    splitter = GroupKFold(n_splits=folds)
    for number, (train, test) in enumerate(splitter.split(scores, groups=topics), start=1):
        passage = passage_rule(scores[train], positive[train])
        page = page_rule(scores[train], positive[train])
        held = scores[test] >= passage
        passing = {
            k: float(held[kind_array[test] == k].mean())
            for k in KINDS
            if (kind_array[test] == k).any()
        }
        recall = float(held[positive[test]].mean()) if positive[test].any() else 0.0
        out.append(FoldThreshold(number, passage, page, recall, passing))
    return out


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _aucs(name: str, corpus: Corpus, scores: dict[str, Floats], log: Log) -> dict[str, float]:
    kinds = [p.kind for p in corpus.pairs]
    counts = {k: kinds.count(k) for k in ("positive", *KINDS)}
    log(f"{name}: {len(corpus.posts)} posts; pairs: {counts}")
    numbers: dict[str, float] = {}
    for variant in VARIANTS:
        aucs = {k: auc(scores[variant], kinds, k) for k in KINDS}
        log(f"  AUC {variant:17}: " + ", ".join(f"{k} {v:.3f}" for k, v in aucs.items()))
        numbers.update({f"auc_{name}_{k}_{variant}": v for k, v in aucs.items()})
    return numbers


def _thresholds(corpus: Corpus, scores: Floats, cfg: RelevanceConfig, log: Log) -> dict[str, float]:
    kinds = [p.kind for p in corpus.pairs]
    folds = cross_validate(scores, kinds, corpus.topics())
    for f in folds:
        passing = ", ".join(f"{k} {v:.2f}" for k, v in f.passing.items())
        log(
            f"fold {f.fold}: passage threshold {f.passage:.2f} (held-out recall {f.recall:.3f};"
            f" negatives passing: {passing}), page threshold {f.page:.2f}"
        )
    positive = np.array([k == "positive" for k in kinds])
    numbers = {
        "passage_threshold": passage_rule(scores, positive),
        "page_threshold": page_rule(scores, positive),
    }
    for name, values in (
        ("passage_threshold_fold", [f.passage for f in folds]),
        ("heldout_recall", [f.recall for f in folds]),
        *((f"heldout_{k}_passing", [f.passing.get(k, 0.0) for f in folds]) for k in KINDS),
    ):
        numbers[f"{name}_mean"], numbers[f"{name}_sd"] = _mean_sd(values)
    kind_array = np.array(kinds)
    for label, threshold in (("configured", cfg.passage_threshold), ("previous", 0.24)):
        numbers[f"recall_at_{label}"] = float((scores[positive] >= threshold).mean())
        for k in KINDS:
            numbers[f"{k}_passing_at_{label}"] = float(
                (scores[kind_array == k] >= threshold).mean()
            )
    fold_mean, fold_sd = (
        numbers["passage_threshold_fold_mean"],
        numbers["passage_threshold_fold_sd"],
    )
    log(
        f"passage threshold on all topics {numbers['passage_threshold']:.2f} (folds"
        f" {fold_mean:.3f} ± {fold_sd:.3f},"
        f" held-out recall {numbers['heldout_recall_mean']:.3f}); page threshold (F1)"
        f" {numbers['page_threshold']:.2f}; configured passage {cfg.passage_threshold:.2f}"
        f" (recall {numbers['recall_at_configured']:.3f}, same-topic negatives passing"
        f" {numbers['same_topic_passing_at_configured']:.2f}; at the previous 0.24:"
        f" {numbers['recall_at_previous']:.3f}, {numbers['same_topic_passing_at_previous']:.2f})"
    )
    return numbers


def run(
    log: Log = print,
    data: Path = DEFAULT_DATA,
    negatives: int = NEGATIVES,
    seed: int = SEED,
    cfg: RelevanceConfig | None = None,
) -> dict[str, float]:
    """The bench entry: AUC per post kind, variant and negative kind; cross-validated
    thresholds (on the two-claim posts, scored the pipeline's way). `cfg` picks the model's
    runtime (the int8 export, say) to compare against the default."""
    cfg = cfg or RelevanceConfig()
    rows = _read(data)
    embedder = get_embedder(cfg)
    cache: dict[str, Floats] = {}
    numbers: dict[str, float] = {}
    two_claims = build_corpus(rows, negatives, seed)
    scores = score_variants(embedder, two_claims, cfg, log, cache)
    numbers.update(_aucs("two_claims", two_claims, scores, log))
    with_aside = build_corpus(rows, negatives, seed, aside=True)
    numbers.update(
        _aucs("aside", with_aside, score_variants(embedder, with_aside, cfg, log, cache), log)
    )
    numbers.update(_thresholds(two_claims, scores[CHOSEN], cfg, log))
    log(f"two_claims, {CHOSEN}, evidence inside a page of {PAGE_PASSAGES} passages:")
    placements = place_in_pages(rows, two_claims, seed)
    vectors = _encode(embedder, [e for p in placements for e in p.page], cache)
    effect = prefilter_effect(two_claims, scores[CHOSEN], placements, vectors, cfg, log)
    numbers.update(effect)
    return numbers


def main(argv: Sequence[str]) -> int:
    parser = dataset_parser(__doc__, DEFAULT_DATA, SEED)
    parser.add_argument("--negatives", type=int, default=NEGATIVES)
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument(
        "--onnx-int8", action="store_true", help="score with the int8-quantised ONNX export"
    )
    args = parser.parse_args(argv)
    if not args.data.is_file():
        raise SystemExit(f"{args.data} not found (pass --data)")
    log: Log = (lambda _line: None) if args.json else print
    cfg = RelevanceConfig(onnx_int8=args.onnx_int8)
    numbers = run(log, args.data, args.negatives, args.seed, cfg)
    if args.json:
        print(json.dumps(numbers, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
