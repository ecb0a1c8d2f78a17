"""Resolve DOI links and link shorteners to the page they lead to, so its publisher can be rated.

Only links whose publisher cannot be read offline are resolved (`pipeline.web.redirectors`: generic
shorteners such as `bit.ly`, DOIs of registrants the bundled list does not know). Resolution
uses the fetcher's SSRF guard (`pipeline.web.ssrf`): every hop that is contacted is checked with
`check_url` and the connection is pinned to the checked address by `guarded_transport`;
redirects are followed here, one hop at a time, never by httpx. Each hop is a HEAD request; a
redirector that refuses HEAD, or answers 200 (some send an HTML page with a meta refresh), gets
a GET whose body is read only up to `resolve_max_bytes`, to find that refresh.

Once a hop points away from redirectors, the target is known and is not contacted: the bot
needs its host, not its page. A target written as a non-public IP address is still refused, so
that a shortener cannot be used to make the trace name an internal address as a "publisher".

Failures never raise: they come back as `Resolution(status="unresolved", reason=...)` with the
reason ("http 404", "redirect loop", "too many redirects", "timeout after 5.0s", "ssrf: ...").
Outcomes are cached per process (LRU); transient failures (timeouts, network errors, 5xx) are
not, so a later call can succeed.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Literal

import httpx

from pipeline.config import CredibilityConfig, FetchConfig
from pipeline.sources.credibility import PublisherRating, PublisherTable
from pipeline.web.domains import parse_host
from pipeline.web.redirectors import offline_target, redirector_for
from pipeline.web.ssrf import GuardedHttp, SSRFError, UnresolvableHostError, check_hop, check_host

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Answers to HEAD from servers that only implement GET.
_HEAD_REFUSED = frozenset({400, 403, 404, 405, 501})
_META_REFRESH = re.compile(
    rb"""<meta[^>]+http-equiv\s*=\s*["']?refresh["']?[^>]*content\s*=\s*["']?\s*\d*\s*;?\s*"""
    rb"""url\s*=\s*['"]?([^"'>\s]+)""",
    re.IGNORECASE,
)

Status = Literal["resolved", "unresolved"]


@dataclass(frozen=True)
class Resolution:
    url: str  # the link as given
    status: Status
    final_url: str | None  # the target, when resolved
    reason: str  # why it is unresolved; "" when resolved
    hops: int  # redirectors contacted (a cached answer repeats the first call's count)


@dataclass(frozen=True)
class LinkRating:
    """A link's publisher rating, and its resolution when one was tried."""

    rating: PublisherRating
    resolution: Resolution | None


class _Unresolved(Exception):
    def __init__(self, reason: str, *, transient: bool = False, hops: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.hops = hops


class LinkResolver(GuardedHttp):
    """Follows DOI and shortener redirects under the SSRF guard; safe to share between threads.

    `is_redirector` decides which hosts are contacted (default: the bundled redirector list,
    DOI resolvers and generic shorteners); tests pass their local server's host.
    """

    def __init__(
        self,
        cfg: CredibilityConfig,
        fetch: FetchConfig,
        client: httpx.Client | None = None,
        is_redirector: Callable[[str], bool] | None = None,
    ) -> None:
        self._cfg = cfg
        self._fetch = fetch
        super().__init__(client, fetch.allow_hosts)
        self._is_redirector = is_redirector or _bundled_redirector
        self._cache: OrderedDict[str, Resolution] = OrderedDict()
        self._lock = threading.Lock()

    def handles(self, url: str) -> bool:
        """True for a link only resolving can rate: a redirector's link whose target cannot be
        read offline (`pipeline.web.redirectors.offline_target`)."""
        if offline_target(url) is not None:
            return False
        host = parse_host(url).host
        return bool(host) and self._is_redirector(host)

    def resolve(self, url: str) -> Resolution:
        """Where `url` leads. Never raises."""
        with self._lock:
            cached = self._cache.get(url)
            if cached is not None:
                self._cache.move_to_end(url)
                return cached
        try:
            final, hops = self._follow(url)
        except _Unresolved as failure:
            outcome = Resolution(url, "unresolved", None, failure.reason, failure.hops)
            if failure.transient:
                return outcome
        else:
            outcome = Resolution(url, "resolved", final, "", hops)
        with self._lock:
            self._cache[url] = outcome
            while len(self._cache) > self._cfg.resolve_cache_size:
                self._cache.popitem(last=False)
        return outcome

    def _follow(self, url: str) -> tuple[str, int]:
        deadline = time.monotonic() + self._cfg.resolve_timeout_s
        current, seen = url, {url}
        for hop in range(self._cfg.resolve_max_hops + 1):
            host = parse_host(current).host
            try:
                if not (host and self._is_redirector(host)):
                    _check_target(current, self._fetch.allow_hosts)
                    return current, hop
                _check_hop(current, self._fetch.allow_hosts)
                following = self._next(current, deadline)
            except _Unresolved as failure:
                failure.hops = hop + 1
                raise
            if following in seen:
                raise _Unresolved("redirect loop", hops=hop + 1)
            seen.add(following)
            current = following
        raise _Unresolved("too many redirects", hops=self._cfg.resolve_max_hops + 1)

    def _next(self, url: str, deadline: float) -> str:
        """The URL the redirector at `url` points to (one HEAD, maybe one capped GET)."""
        status, location = self._send("HEAD", url, deadline)
        if status in _REDIRECT_STATUSES:
            return _join(url, location, status)
        if status in _HEAD_REFUSED or status == 200:
            status, location, body = self._get(url, deadline)
            if status in _REDIRECT_STATUSES:
                return _join(url, location, status)
            if status == 200:
                refresh = _META_REFRESH.search(body)
                if refresh is not None:
                    return _join(url, refresh.group(1).decode("ascii", "replace"), status)
                raise _Unresolved(f"no redirect from {parse_host(url).host} (http 200)")
        raise _Unresolved(f"http {status}", transient=status >= 500 or status == 429)

    def _send(self, method: str, url: str, deadline: float) -> tuple[int, str | None]:
        status, location, _ = self._request(method, url, deadline, read=False)
        return status, location

    def _get(self, url: str, deadline: float) -> tuple[int, str | None, bytes]:
        return self._request("GET", url, deadline, read=True)

    def _request(
        self, method: str, url: str, deadline: float, *, read: bool
    ) -> tuple[int, str | None, bytes]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Unresolved(self._timeout(), transient=True)
        try:
            request = self._client.build_request(
                method,
                url,
                headers={"User-Agent": self._fetch.user_agent, "Accept": "text/html,*/*;q=0.1"},
                timeout=httpx.Timeout(remaining),
            )
            response = self._client.send(request, stream=True, follow_redirects=False)
        except Exception as exc:
            raise _network_failure(exc, self._timeout()) from exc
        body = bytearray()
        try:
            if read and response.status_code == 200:
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) >= self._cfg.resolve_max_bytes or time.monotonic() > deadline:
                        break
        except httpx.HTTPError as exc:
            raise _network_failure(exc, self._timeout()) from exc
        finally:
            response.close()
        return response.status_code, response.headers.get("location"), bytes(body)

    def _timeout(self) -> str:
        return f"timeout after {self._cfg.resolve_timeout_s}s"


def _bundled_redirector(host: str) -> bool:
    found = redirector_for(host)
    return found is not None and found.kind in ("doi", "shortener")


def _join(base: str, location: str | None, status: int) -> str:
    if not location:
        raise _Unresolved(f"http {status} without location")
    try:
        return str(httpx.URL(base).join(location.strip()))
    except (httpx.InvalidURL, ValueError) as exc:
        raise _Unresolved(f"invalid redirect location: {exc}") from exc


def _check_hop(url: str, allow_hosts: Collection[str]) -> None:
    check_hop(url, allow_hosts, lambda reason, transient: _Unresolved(reason, transient=transient))


def _check_target(url: str, allow_hosts: Collection[str]) -> None:
    """A target that is not contacted: refuse odd schemes and non-public IP literals only (a
    host name is not looked up, since nothing connects to it)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        raise _Unresolved(f"invalid redirect location: {exc}") from exc
    if parsed.scheme not in ("http", "https"):
        raise _Unresolved(f"ssrf: refused scheme {parsed.scheme or '(none)'}")
    host = parsed.host
    if parse_host(host).ip:
        try:
            check_host(host, parsed.port or 443, allow_hosts)
        except SSRFError as exc:
            raise _Unresolved(f"ssrf: {exc}") from exc


def _network_failure(exc: Exception, timeout_message: str) -> _Unresolved:
    if isinstance(exc, UnresolvableHostError):
        return _Unresolved(f"dns: {exc}", transient=True)
    if isinstance(exc, SSRFError):
        return _Unresolved(f"ssrf: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return _Unresolved(timeout_message, transient=True)
    if isinstance(exc, httpx.ConnectError):
        return _Unresolved(f"connection failed: {exc}", transient=True)
    return _Unresolved(f"fetch error: {type(exc).__name__}: {exc}", transient=True)


def rate_link(table: PublisherTable, url: str, resolver: LinkResolver | None = None) -> LinkRating:
    """Rate `url`'s publisher; with a resolver, a DOI or shortener link is rated as its target.

    Without a resolver, or when resolution fails, the link keeps its offline rating (Unknown,
    by the redirector rule) and the failure's reason is added to the rating's reason.
    """
    rating = table.lookup(url)
    if resolver is None or not resolver.handles(url):
        return LinkRating(rating, None)
    resolution = resolver.resolve(url)
    if resolution.status == "resolved" and resolution.final_url:
        target = table.lookup(resolution.final_url)
        via = f"resolved {parse_host(url).host} to {target.domain or resolution.final_url}"
        return LinkRating(replace(target, query=url, reason=f"{via}: {target.reason}"), resolution)
    reason = f"{rating.reason} (unresolved: {resolution.reason})"
    return LinkRating(replace(rating, reason=reason), resolution)
