"""The long-lived parts a check uses, built once per process and shared by requests.

Only caches that are safe to lose live here (the embedding model, HTTP clients, the publisher
table, the local index, claim index and authority index handles, recently encoded passages);
everything about one request lives in its own records.

The bot passes its main database (`database`): the three indexes are its tables, created by
the migrations. Without one (the evaluations, the benchmarks, tests), `index_path` is a
standalone local index, and the claim and authority indexes are opened only when their files
exist: the check path never creates them (`factnote claims import` and the timeline pull do).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine

from pipeline.authority.retrieval import AuthorityIndex
from pipeline.claims.index import ClaimIndex
from pipeline.config import PipelineConfig
from pipeline.images.embedding import ImageEmbedder, embedder_for
from pipeline.images.ocr import OcrEngine, get_ocr
from pipeline.images.phash import ImageStore, MemoryImageStore
from pipeline.images.recognition import ImageRecognizer, build_recognizer
from pipeline.images.reverse_search import ReverseImageSearch, build_reverse_search
from pipeline.learning.memory import MemoryBank
from pipeline.llm.client import LLMClient
from pipeline.records import Document
from pipeline.relevance.scoring import Embedder, PassageCache, get_embedder
from pipeline.search.local_index import LocalIndex
from pipeline.search.registry import build_providers
from pipeline.search.tiered import TieredSearch
from pipeline.sources.credibility import PublisherTable
from pipeline.web.fetch import DocumentStore, Fetcher


@dataclass
class SharedParts:
    cfg: PipelineConfig
    llm: LLMClient
    publishers: PublisherTable
    search: TieredSearch
    fetcher: Fetcher
    embedder: Embedder
    local_index: LocalIndex | None = None
    claim_index: ClaimIndex | None = None
    authority_index: AuthorityIndex | None = None
    passages: PassageCache = field(default_factory=PassageCache)
    # Images seen before (near duplicates) and the offline OCR engine (None: OCR off).
    images: ImageStore = field(default_factory=MemoryImageStore)
    ocr: OcrEngine | None = None
    reverse_images: ReverseImageSearch | None = None  # None: no key, the stage is skipped
    image_embedder: ImageEmbedder | None = None  # None: pHash only (images.embedding off)
    image_recognizer: ImageRecognizer | None = None  # None: no key, the stage is skipped
    # Experience memory (pipeline.learning.memory), set by whoever holds the store; None: no memory.
    memory: MemoryBank | None = None

    @classmethod
    def build(
        cls,
        cfg: PipelineConfig,
        *,
        database: Engine | None = None,
        index_path: str | Path | None = None,
        store: DocumentStore | None = None,
        search: TieredSearch | None = None,
        fetcher: Fetcher | None = None,
        llm: LLMClient | None = None,
        claim_index: ClaimIndex | None = None,
        authority_index: AuthorityIndex | None = None,
        images: ImageStore | None = None,
    ) -> SharedParts:
        embedder = get_embedder(cfg.relevance)
        publishers = PublisherTable.from_config(cfg.credibility)
        local_target = database if database is not None else index_path
        local = LocalIndex(local_target, embedder=embedder) if local_target else None
        if search is None:
            providers = build_providers(cfg.search, local=local)
            search = TieredSearch(providers, publishers)
        claims_at = database if database is not None else _existing(cfg.claims.path)
        if claim_index is None and claims_at is not None:
            claim_index = ClaimIndex(claims_at, embedder, cfg=cfg.claims, publishers=publishers)
        authority_at = database if database is not None else _existing(cfg.authority.path)
        if authority_index is None and authority_at is not None:
            authority_index = AuthorityIndex(authority_at, embedder, cfg=cfg.authority)
        return cls(
            cfg=cfg,
            llm=llm or LLMClient(cfg.llm),
            publishers=publishers,
            search=search,
            fetcher=fetcher or Fetcher(cfg.fetch, store=store),
            embedder=embedder,
            local_index=local,
            claim_index=claim_index,
            authority_index=authority_index,
            images=images if images is not None else MemoryImageStore(),
            ocr=get_ocr(cfg.images) if cfg.images.ocr else None,
            reverse_images=build_reverse_search(cfg.images),
            image_recognizer=build_recognizer(cfg.images),
            image_embedder=embedder_for(cfg.images),
        )

    def get_document(self, url: str) -> Document:
        """A page's text: from the local index when it holds the page (no network), otherwise
        fetched through the SSRF-guarded fetcher."""
        if self.local_index is not None:
            doc = self.local_index.get(url)
            if doc is not None:
                return doc
        return self.fetcher.fetch(url)

    def close(self) -> None:
        self.fetcher.close()
        for client in (self.reverse_images, self.image_recognizer):
            if client is not None:
                client.close()
        for index in (self.local_index, self.claim_index, self.authority_index):
            if index is not None:
                index.close()


def _existing(path: str) -> str | None:
    return path if Path(path).is_file() else None
