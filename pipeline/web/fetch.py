"""Fetch web pages safely into `Document` snapshots, and decide whether a snapshot may be evidence.

`Fetcher.fetch` never raises for a page-level technical failure: a dead link, an SSRF refusal, a
timeout or an oversized page becomes `Document(ok=False, error=...)` with a precise message, so
the trace can show it and it is never mistaken for "no evidence". Protections:

* SSRF: every hop is checked by `pipeline.web.ssrf.check_url`; redirects are followed here, not by
  httpx, at most `max_redirects` times; the default client pins each connection to a checked
  address (see `pipeline.web.ssrf`).
* Size: the body is streamed and reading stops once it passes `max_bytes` (counted after
  content decoding, so a compressed bomb is cut too).
* Time: `timeout_s` is a deadline for the whole page, redirects included. Each network operation
  gets the time left, and the deadline is checked after every chunk, so a server that drips bytes
  cannot hold the fetch open; a single stalled read can overrun by at most the time left when the
  hop started.
* Type: only HTML, XHTML and plain text are read.

Successful snapshots are cached in a `DocumentStore` by canonical URL for `cache_ttl_s`; failures
are not cached, because most of them (timeouts, 5xx) are transient.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Protocol

import httpx

from pipeline.config import FetchConfig
from pipeline.records import Document, utcnow
from pipeline.web.html_text import SUPPORTED_TYPES, extract_document, parse_content_type
from pipeline.web.ssrf import GuardedHttp, SSRFError, UnresolvableHostError, check_hop
from pipeline.web.urls import canonical_url

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1"


class DocumentStore(Protocol):
    """Where snapshots are kept; storage implements it with SQL, the pipeline only knows this."""

    def get(self, canonical_url: str) -> Document | None: ...

    def put(self, doc: Document) -> None: ...


class MemoryDocumentStore:
    """A dict-backed, thread-safe DocumentStore."""

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}
        self._lock = threading.Lock()

    def get(self, canonical_url: str) -> Document | None:
        with self._lock:
            return self._docs.get(canonical_url)

    def put(self, doc: Document) -> None:
        with self._lock:
            self._docs[doc.canonical_url] = doc


class FetchFailure(Exception):
    """A page-level failure, carried up to `fetch` to become an ok=False Document."""

    def __init__(
        self,
        error: str,
        *,
        final_url: str | None = None,
        status_code: int | None = None,
        content_type: str | None = None,
    ) -> None:
        super().__init__(error)
        self.error = error
        self.final_url = final_url
        self.status_code = status_code
        self.content_type = content_type


class RawPage:
    def __init__(self, final_url: str, status_code: int, content_type: str, data: bytes) -> None:
        self.final_url = final_url
        self.status_code = status_code
        self.content_type = content_type
        self.data = data


class Fetcher(GuardedHttp):
    """Fetches pages into Documents; safe to share between threads."""

    def __init__(
        self,
        cfg: FetchConfig,
        store: DocumentStore | None = None,
        client: httpx.Client | None = None,
        cache_ttl_s: float = 86400,
    ) -> None:
        self._cfg = cfg
        self._store: DocumentStore = store if store is not None else MemoryDocumentStore()
        super().__init__(client, cfg.allow_hosts)
        self._cache_ttl_s = cache_ttl_s
        # Requested canonical URL -> canonical URL of the page it redirected to, so a redirected
        # link is a cache hit too (the store is keyed by the final page).
        self._aliases: dict[str, str] = {}
        self._lock = threading.Lock()

    def fetch(self, url: str) -> Document:
        requested = _canonical_or_raw(url)
        cached = self._cached(requested)
        if cached is not None:
            return cached.model_copy(update={"url": url})
        try:
            body = self.fetch_raw(url)
        except FetchFailure as download_failure:
            return _failed(url, requested, download_failure)
        try:
            doc = extract_document(url, body.data, body.content_type, final_url=body.final_url)
        except Exception as exc:
            # A parser crash on one hostile page must not take down the whole decision.
            extraction_failure = FetchFailure(
                f"extraction failed: {type(exc).__name__}: {exc}",
                final_url=body.final_url,
                status_code=body.status_code,
                content_type=parse_content_type(body.content_type)[0] or None,
            )
            return _failed(url, requested, extraction_failure)
        doc = doc.model_copy(update={"status_code": body.status_code, "fetched_at": utcnow()})
        self._store.put(doc)
        if doc.canonical_url != requested:
            with self._lock:
                self._aliases[requested] = doc.canonical_url
        return doc

    def _cached(self, requested: str) -> Document | None:
        with self._lock:
            key = self._aliases.get(requested, requested)
        doc = self._store.get(key)
        if doc is None or not doc.ok:
            return None
        fetched = doc.fetched_at if doc.fetched_at.tzinfo else doc.fetched_at.replace(tzinfo=UTC)
        if (datetime.now(UTC) - fetched).total_seconds() > self._cache_ttl_s:
            return None
        return doc

    def fetch_raw(
        self,
        url: str,
        *,
        accept: str = _ACCEPT,
        media_types: Collection[str] = SUPPORTED_TYPES,
        max_bytes: int | None = None,
    ) -> RawPage:
        """The raw body, under the same SSRF guard, caps and redirect rules as `fetch`, for
        callers that need markup extraction drops (ClaimReview JSON-LD in <script> tags) or
        other media (images: `media_types` and `max_bytes` of their own; a body without a
        declared type is then returned for the caller to sniff). Raises `FetchFailure` with
        the precise reason."""
        cfg = self._cfg
        deadline = time.monotonic() + cfg.timeout_s
        current = url
        for _hop in range(cfg.max_redirects + 1):
            _check(current, cfg.allow_hosts)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FetchFailure(self._timeout_message(), final_url=current)
            try:
                request = self._client.build_request(
                    "GET",
                    current,
                    headers={"User-Agent": cfg.user_agent, "Accept": accept},
                    timeout=httpx.Timeout(remaining),
                )
                response = self._client.send(request, stream=True, follow_redirects=False)
            except Exception as exc:
                raise self._network_failure(exc, current) from exc
            try:
                if response.status_code in _REDIRECT_STATUSES:
                    location = response.headers.get("location")
                    if not location:
                        raise FetchFailure(
                            f"http {response.status_code} without location",
                            final_url=current,
                            status_code=response.status_code,
                        )
                    try:
                        current = str(response.url.join(location.strip()))
                    except (httpx.InvalidURL, ValueError) as exc:
                        raise FetchFailure(
                            f"invalid redirect location: {exc}",
                            final_url=current,
                            status_code=response.status_code,
                        ) from exc
                    continue
                return self._read(
                    response, current, deadline, media_types, max_bytes or cfg.max_bytes
                )
            finally:
                response.close()
        raise FetchFailure("too many redirects", final_url=current)

    def _read(
        self,
        response: httpx.Response,
        url: str,
        deadline: float,
        media_types: Collection[str],
        max_bytes: int,
    ) -> RawPage:
        status = response.status_code
        header_type = response.headers.get("content-type", "")
        media, _charset = parse_content_type(header_type)
        if status >= 300:
            raise FetchFailure(
                f"http {status}", final_url=url, status_code=status, content_type=media or None
            )
        if media and media not in media_types:
            raise FetchFailure(
                f"unsupported content type: {media}",
                final_url=url,
                status_code=status,
                content_type=media,
            )
        too_large = FetchFailure(
            f"too large: over {max_bytes} bytes",
            final_url=url,
            status_code=status,
            content_type=media or None,
        )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise too_large
        data = bytearray()
        try:
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > max_bytes:
                    raise too_large
                if time.monotonic() > deadline:
                    raise FetchFailure(self._timeout_message(), final_url=url, status_code=status)
        except httpx.HTTPError as exc:
            raise self._network_failure(exc, url, status) from exc
        if not media and "text/html" in media_types:
            # No declared type: accept only what is recognisably HTML, never guess further.
            # (Other media are sniffed by their callers.)
            head = bytes(data[:1024]).lstrip().lower()
            if not head.startswith((b"<!doctype html", b"<html")):
                raise FetchFailure(
                    "unsupported content type: (none)", final_url=url, status_code=status
                )
            header_type = "text/html"
        return RawPage(url, status, header_type, bytes(data))

    def _timeout_message(self) -> str:
        return f"timeout after {self._cfg.timeout_s}s"

    def _network_failure(self, exc: Exception, url: str, status: int | None = None) -> FetchFailure:
        if isinstance(exc, UnresolvableHostError):
            message = f"dns: {exc}"
        elif isinstance(exc, SSRFError):
            message = f"ssrf: {exc}"
        elif isinstance(exc, httpx.TimeoutException):
            message = self._timeout_message()
        elif isinstance(exc, httpx.ConnectError):
            message = f"connection failed: {exc}"
        elif isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
            message = f"invalid url: {exc}"
        elif isinstance(exc, httpx.HTTPError):
            message = f"http error: {type(exc).__name__}: {exc}"
        else:
            # Anything else escaping httpx is still a failure of this page, not of the run.
            message = f"fetch error: {type(exc).__name__}: {exc}"
        return FetchFailure(message, final_url=url, status_code=status)


def _check(url: str, allow_hosts: list[str]) -> None:
    check_hop(url, allow_hosts, lambda reason, _transient: FetchFailure(reason, final_url=url))


def _canonical_or_raw(url: str) -> str:
    try:
        return canonical_url(url)
    except ValueError:  # e.g. an out-of-range port: the fetch will fail with a precise error
        return url.strip()


def _failed(url: str, requested: str, failure: FetchFailure) -> Document:
    final = failure.final_url
    return Document(
        url=url,
        canonical_url=_canonical_or_raw(final) if final else requested,
        final_url=final,
        ok=False,
        status_code=failure.status_code,
        content_type=failure.content_type,
        error=failure.error,
    )


def usability(
    doc: Document, *, as_of: datetime, replay: bool, reference_ok: bool, cfg: FetchConfig
) -> str | None:
    """None if `doc` may be used as evidence at `as_of`, else why it is kept in the trace only.

    Dateless pages follow `cfg.dateless`; under "reference_only" they are allowed only when the
    caller vouches for the publisher (`reference_ok`: High tier or a public-body/reference
    source) and not in replay, where as-of is the post's time and an undated page cannot be shown
    to predate it. A naive `as_of` is taken as UTC.
    """
    if not doc.ok:
        return f"fetch failed: {doc.error or 'unknown error'}"
    as_of_utc = as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC)
    published = doc.published
    if published is not None:
        if published.tzinfo is None:
            published = published.replace(tzinfo=UTC)
        if published > as_of_utc:
            return (
                f"published after as-of ({published.astimezone(UTC).isoformat()} > "
                f"{as_of_utc.astimezone(UTC).isoformat()})"
            )
    if doc.word_count < cfg.min_words:
        return f"under {cfg.min_words} words ({doc.word_count})"
    if published is None:
        if cfg.dateless == "allow":
            return None
        if cfg.dateless == "exclude":
            return "no publication date (policy: exclude)"
        if replay:
            return "no publication date (replay: cannot show it predates as-of)"
        if not reference_ok:
            return "no publication date (not a reference publisher)"
    return None
