"""The long-lived parts a check uses, built once per process and shared by requests.

Only caches that are safe to lose live here (the embedding model, HTTP clients, the publisher
table, the local index, claim index and authority index handles, recently encoded passages);
everything about one request lives in its own records.

The three indexes keep their rows in a database, through rows objects (`StoreRows`) that
whoever holds the database opens and hands in: the bot its main database's tables
(`bot.ops.runtime.index_rows`), the benchmarks and tests standalone files
(`testing.indexes.standalone_rows`). The pipeline itself writes no SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.authority.retrieval import AuthorityIndex
from pipeline.authority.rows import StatementRows
from pipeline.claims.index import ClaimIndex
from pipeline.claims.rows import ClaimRows
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
from pipeline.search.rows import DocumentRows
from pipeline.search.tiered import TieredSearch
from pipeline.sources.credibility import PublisherTable
from pipeline.web.fetch import DocumentStore, Fetcher


@dataclass(frozen=True)
class StoreRows:
    """The rows of the local, claim and authority indexes; a store without rows is not used."""

    documents: DocumentRows | None = None
    claims: ClaimRows | None = None
    statements: StatementRows | None = None


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
        rows: StoreRows | None = None,
        store: DocumentStore | None = None,
        search: TieredSearch | None = None,
        fetcher: Fetcher | None = None,
        llm: LLMClient | None = None,
        claim_index: ClaimIndex | None = None,
        authority_index: AuthorityIndex | None = None,
        images: ImageStore | None = None,
    ) -> SharedParts:
        """The parts for `cfg`; the indexes over `rows` (a claim or authority index given
        ready is used instead of its rows, which are then closed)."""
        rows = rows or StoreRows()
        embedder = get_embedder(cfg.relevance)
        publishers = PublisherTable.from_config(cfg.credibility)
        local = LocalIndex(rows.documents, embedder=embedder) if rows.documents else None
        if search is None:
            providers = build_providers(cfg.search, local=local)
            search = TieredSearch(providers, publishers)
        if rows.claims is not None:
            if claim_index is None:
                claim_index = ClaimIndex(
                    rows.claims, embedder, cfg=cfg.claims, publishers=publishers
                )
            else:
                rows.claims.close()
        if rows.statements is not None:
            if authority_index is None:
                authority_index = AuthorityIndex(rows.statements, embedder, cfg=cfg.authority)
            else:
                rows.statements.close()
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
