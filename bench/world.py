"""The far side of every boundary the benchmarks cross, built from `bench.fixtures`.

* `FixtureSearch` plays a web search API: a `SearchProvider` that waits `delay_s` (the API's
  round trip) and returns the fixture pages found by that exact query, honouring `site:`
  filters as a real engine does, so `TieredSearch` gets tier-specific results. Like a real
  engine it also answers queries nobody scripted (the post's own words, which the head start
  searches): by BM25 over every fixture page's title and text, best first, so such a query
  finds whatever pages share its words, on topic or not.
* `FixtureWeb` plays the websites: the test suite's local HTTP server holds every fixture page
  under its absolute URL and answers after `delay_s`. The pipeline's real `Fetcher` reaches it
  as a forward HTTP proxy (an ordinary `httpx.Client(proxy=...)` passed through the Fetcher's
  own `client` parameter), so the fictional `.example` hosts keep their names: the publisher
  table rates them as it would real sites, and download, type/size checks and the real
  extraction run for every page, inside the timed run. `FetchConfig.allow_hosts` lists the
  fictional hosts, since they do not resolve (the setting exists for test servers).
* `build_shared_parts` wires the real `SharedParts` to all three.
* `FixtureModel` plays the LLM behind the fake OpenAI-compatible server: answers are built from
  the request, like a model reading its prompt. The analyst returns the fixture's claims and
  queries; the extractor quotes each page's key sentences when they are among the passages it
  was sent (so a passage lost to relevance filtering is evidence lost, as with a real model);
  the re-querier returns the next batch of fixture queries; the writer cites the first two
  evidence URLs. Asked to draft the reply along with its quotes, the extractor does so whenever
  it has anything (verdict from the strongest stance among its quotes and the evidence found
  earlier that the prompt shows: refutes, then context, then supports), citing the first two
  URLs of that evidence, earlier evidence first. Every answer is recorded so completion sizes
  can be counted.
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import bm25s
import httpx

from bench import fixtures
from bench.fixtures import FixturePage, FixturePost
from pipeline.config import (
    AuthorityConfig,
    ClaimsConfig,
    CredibilityConfig,
    FetchConfig,
    PipelineConfig,
    ResearchConfig,
)
from pipeline.llm.prompts import EVIDENCE_DRAFT_SYSTEM
from pipeline.records import SearchResult
from pipeline.relevance.lexical import terms
from pipeline.research.evidence_extraction import normalise
from pipeline.search.tiered import TieredSearch
from pipeline.shared_parts import SharedParts
from pipeline.sources.credibility import PublisherTable
from pipeline.web.fetch import Fetcher, MemoryDocumentStore
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.fakes.openai_server import FakeLLM, Reply
from testing.indexes import build_parts

KEY_CONFIDENCE = {"refutes": 0.9, "context": 0.85, "supports": 0.85}
_PAGE_BLOCK = re.compile(r'<page n="(\d+)" url="([^"]*)"[^>]*>\n(.*?)\n</page>', re.S)
_EVIDENCE_URL = re.compile(r'<evidence [^>]*url="([^"]+)"')
_KNOWN_EVIDENCE = re.compile(r'<evidence [^>]*url="([^"]+)"[^>]*stance="([^"]+)"')
_STANCE_VERDICT = (("refutes", "refuted"), ("context", "misleading"), ("supports", "supported"))
_TRIED = re.compile(r"Queries already tried:\n(.*?)\n\n", re.S)
# Where no claim or authority index exists: the benchmarks measure web research, and must not
# pick up whatever index sits in the working directory's data/ folder.
_ABSENT = Path(tempfile.gettempdir()) / "factnote-bench-no-index"


# --- search -----------------------------------------------------------------------------------


def _site_filter(sites: Sequence[str]) -> Callable[[str], bool]:
    """Whether a URL is on one of `sites` (a host and its subdomains, or a host/path prefix).
    Hosts go in a set, looked up with each of the URL's parent domains: a tier's list holds
    thousands of publishers, and this simulated engine's CPU time must not pass for the
    pipeline's own in the benchmarks' local compute."""
    hosts = {s.lower().strip() for s in sites if "/" not in s}
    prefixes = tuple(s.lower().strip() for s in sites if "/" in s)

    def matches(url: str) -> bool:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if prefixes and f"{host}{parts.path}".startswith(prefixes):
            return True
        labels = host.split(".")
        return any(".".join(labels[i:]) in hosts for i in range(len(labels)))

    return matches


class FixtureSearch:
    """A `SearchProvider` over the fixture pages."""

    name = "fixture"
    # A real engine's `site:` support is what makes a tier search return that tier; this one
    # takes the whole list (the real ones cap it, and rely on the same rating afterwards).
    max_sites = 10_000

    def __init__(self, delay_s: float = 0.5) -> None:
        self.delay_s = delay_s
        self._index: dict[str, list[FixturePage]] = {}
        for post in fixtures.POSTS:
            queries = post.all_queries()
            for page in post.pages:
                for i in page.found_by:
                    self._index.setdefault(queries[i].lower(), []).append(page)
        self._pages = fixtures.all_pages()
        self._bm25 = bm25s.BM25()
        self._bm25.index(
            [terms(fixtures.document(p.url).text) or ["-"] for p in self._pages],
            show_progress=False,
        )
        self._lock = threading.Lock()
        self.calls = 0

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        with self._lock:
            self.calls += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        hits = self._index.get(query.strip().lower())
        if hits is None:
            hits = self._ranked(query)
        if sites:
            on_sites = _site_filter(sites)
            hits = [p for p in hits if on_sites(p.url)]
        return [
            SearchResult(
                url=page.url,
                title=page.title,
                snippet=(page.key or page.facts or (page.title,))[0][:200],
                provider=self.name,
                query=query,
                rank=rank,
                published=page.published,
            )
            for rank, page in enumerate(hits[:limit], 1)
        ]

    def _ranked(self, query: str) -> list[FixturePage]:
        words = terms(query)
        if not words:
            return []
        with self._lock:  # bm25s keeps per-call state
            scores = self._bm25.get_scores(words)
        order = sorted(range(len(self._pages)), key=lambda i: -float(scores[i]))
        return [self._pages[i] for i in order if scores[i] > 0]


# --- the web ----------------------------------------------------------------------------------


class FixtureWeb:
    """The fixture pages served by a local HTTP server, reached as a forward proxy."""

    def __init__(self, delay_s: float = 1.0) -> None:
        self.delay_s = delay_s
        self.server = LocalHTTPServer()

    def __enter__(self) -> FixtureWeb:
        self.server.start()
        for page in fixtures.all_pages():
            body = fixtures.page_html(page.url).encode()
            # The proxy sees the absolute URL as the request path.
            self.server.add(page.url, Route(body=body, delay_s=self.delay_s))
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def client(self) -> httpx.Client:
        """An HTTP client whose every request goes through this server."""
        return httpx.Client(proxy=self.server.base_url, follow_redirects=False, trust_env=False)

    @property
    def fetches(self) -> int:
        return self.server.hits()


# --- the model --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    key: str  # schema name
    content: str


def extraction_items(page: FixturePage, passages: str) -> list[dict[str, Any]]:
    """What the extractor answers for `page` given the page text it was sent."""
    if page.stance not in KEY_CONFIDENCE:
        return []
    sent = normalise(passages)
    return [
        {"quote": key, "stance": page.stance, "confidence": KEY_CONFIDENCE[page.stance]}
        for key in page.key
        if normalise(key) in sent
    ]


class FixtureModel:
    """Scripted answers for every pipeline step, derived from each request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.answers: list[Answer] = []

    def install(self, fake: FakeLLM) -> None:
        fake.script("analyze", self._analysis)
        fake.script("evidence", self._evidence)
        fake.script("requery", self._requery)
        fake.script(("write", "rewrite"), self._draft)

    def _record(self, key: str, payload: dict[str, Any]) -> Reply:
        content = json.dumps(payload, ensure_ascii=False)
        with self._lock:
            self.answers.append(Answer(key, content))
        return Reply.text(content)

    @staticmethod
    def _user(body: dict[str, Any]) -> str:
        return str(body["messages"][-1]["content"])

    def _post(self, body: dict[str, Any]) -> FixturePost:
        post = fixtures.post_in(self._user(body))
        if post is None:
            raise LookupError("the prompt holds no fixture post")
        return post

    def _analysis(self, body: dict[str, Any]) -> Reply:
        post = self._post(body)
        return self._record(
            "analyze",
            {
                "checkable": post.checkable,
                "reason": post.reason,
                "claims": list(post.claims),
                "questions": list(post.questions),
                "queries": list(post.queries),
            },
        )

    def _evidence(self, body: dict[str, Any]) -> Reply:
        user = self._user(body)
        post = fixtures.post_in(user)
        items: list[dict[str, Any]] = []
        urls: dict[int, str] = {}
        for match in _PAGE_BLOCK.finditer(user):
            page = fixtures.page_by_url(match.group(2))
            # A page written about another post says nothing about this one's claims, whatever
            # its stance there (searching the post's own words can find such pages).
            if page is None or post is None or page not in post.pages:
                continue
            number = int(match.group(1))
            found = extraction_items(page, match.group(3))
            items.extend({"page": number, **item} for item in found)
            if found:
                urls.setdefault(number, match.group(2))
        payload: dict[str, Any] = {"items": items}
        if body["messages"][0]["content"] == EVIDENCE_DRAFT_SYSTEM:
            # Evidence found earlier comes first, as it would for the writer.
            known = _KNOWN_EVIDENCE.findall(user)
            cited = list(dict.fromkeys([*(url for url, _ in known), *urls.values()]))[:2]
            stances = [stance for _, stance in known] + [item["stance"] for item in items]
            payload["draft"] = self._inline_draft(post, stances, cited)
        return self._record("evidence", payload)

    @staticmethod
    def _inline_draft(
        post: FixturePost | None, stances: list[str], urls: list[str]
    ) -> dict[str, Any] | None:
        verdict = next((v for s, v in _STANCE_VERDICT if s in stances), None)
        if post is None or verdict is None:
            return None
        return {"verdict": verdict, "text": " ".join([post.reply, *urls])}

    def _requery(self, body: dict[str, Any]) -> Reply:
        post = self._post(body)
        match = _TRIED.search(self._user(body))
        tried = {
            line[2:].strip().lower() for line in (match.group(1) if match else "").splitlines()
        }
        batch: tuple[str, ...] = ()
        for candidate in post.requeries:
            if not all(q.lower() in tried for q in candidate):
                batch = candidate
                break
        return self._record(
            "requery",
            {
                "missing": "a source that addresses the claim itself",
                "established": "the sources so far describe the background but do not settle "
                "the claim",
                "queries": list(batch),
            },
        )

    def _draft(self, body: dict[str, Any]) -> Reply:
        post = self._post(body)
        user = self._user(body)
        urls = list(dict.fromkeys(_EVIDENCE_URL.findall(user)))[:2]
        text = post.reply
        if "rejected by the checker" in user and "too_long" in user:
            # What a model does when told the draft is too long: keep the first sentence.
            text = text.split(". ")[0].rstrip(".") + "."
        return self._record("write", {"text": " ".join([text, *urls])})


# --- wiring -----------------------------------------------------------------------------------


def pipeline_config(fake: FakeLLM, concurrency: int | None = None) -> PipelineConfig:
    """Defaults everywhere, except: the fake LLM, the fixture publishers' tiers, the fictional
    hosts exempt from the SSRF guard's DNS check, no claim or authority index, and (when given)
    the research concurrency."""
    if concurrency is None:
        research = ResearchConfig()
    elif concurrency == 1:
        # MUSE's order: one thing at a time, searches included.
        research = ResearchConfig(concurrency=1, search_concurrency=1)
    else:
        research = ResearchConfig(concurrency=concurrency)
    return PipelineConfig(
        llm=fake.config(timeout_s=30.0),
        fetch=FetchConfig(allow_hosts=fixtures.HOSTS),
        credibility=CredibilityConfig(overrides=fixtures.TIERS),
        research=research,
        claims=ClaimsConfig(path=str(_ABSENT / "claims.sqlite")),
        authority=AuthorityConfig(path=str(_ABSENT / "authority.sqlite")),
    )


def build_shared_parts(cfg: PipelineConfig, search: FixtureSearch, web: FixtureWeb) -> SharedParts:
    """The real shared parts, searching `search` and fetching from `web`, with an empty cache."""
    publishers = PublisherTable.from_config(cfg.credibility)
    fetcher = Fetcher(cfg.fetch, store=MemoryDocumentStore(), client=web.client())
    return build_parts(cfg, search=TieredSearch([search], publishers), fetcher=fetcher)
