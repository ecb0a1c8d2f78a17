"""The contract every search provider meets, and what the web providers share.

`SearchProvider` is the protocol the research loop and `TieredSearch` depend on; the web
providers and the local index implement it. `SearchError` is the one failure type: a provider
that cannot answer raises it, so a technical failure is never mistaken for "nothing found".
The rest (site-restricted queries, date parsing, the retrying JSON request) is shared plumbing
for the HTTP providers.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import httpx
from pydantic import SecretStr
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_any,
    wait_exponential,
)

from pipeline import safejson
from pipeline.config import SearchConfig
from pipeline.failures import PipelineFailure
from pipeline.records import SearchResult
from pipeline.redaction import redact
from pipeline.web.deadline import Deadline, stop_at_deadline, within

C = TypeVar("C")  # a provider's config section

# The most of one answer that is read. Search APIs answer in tens of kilobytes (Google's ten
# results: ~30 KB; SearXNG's page: ~100 KB); a 50 MB answer took 1.1 GB to parse (issue 33).
MAX_RESPONSE_BYTES = 5_000_000


class SearchError(PipelineFailure):
    """A provider could not answer (HTTP error after retries, bad JSON, missing key, ...).

    The message names the provider and the cause, and never contains a secret.
    """

    stage = "search"


@runtime_checkable
class SearchProvider(Protocol):
    """Something that turns a query into ranked results.

    `max_sites` is how many `site:` filters one query can carry (0: none); the caller passes at
    most that many in `sites`, and treats them as a hint, never as a guarantee.
    """

    name: str
    max_sites: int

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        """Up to `limit` results, best first, with `rank` from 1. Raises `SearchError`."""
        ...


def site_query(
    query: str, sites: Sequence[str], max_sites: int, *, max_words: int | None = None
) -> str:
    """`query (site:a OR site:b ...)` with at most `max_sites` sites.

    With `max_words`, sites are dropped from the end until the whole query fits, because some
    engines (Google's 32-word cap) silently ignore the words past the limit, and the site group
    comes last.
    """
    query = query.strip()
    chosen = [s.strip() for s in sites if s.strip()][: max(max_sites, 0)]
    while chosen:
        group = " OR ".join(f"site:{s}" for s in chosen)
        full = f"{query} ({group})" if len(chosen) > 1 else f"{query} site:{chosen[0]}"
        if max_words is None or len(full.split()) <= max_words:
            return full
        chosen.pop()
    return query


_DATE_FORMATS = (
    "%b %d, %Y",  # Mar 5, 2024 (Serper, Brave `age`)
    "%B %d, %Y",  # March 5, 2024
    "%d %b %Y",  # 5 Mar 2024
    "%d %B %Y",  # 5 March 2024
    "%Y/%m/%d",
)
_RELATIVE = re.compile(r"\b(ago|yesterday|today|hours?|minutes?|days?|weeks?)\b", re.IGNORECASE)


def parse_published(value: object) -> datetime | None:
    """An aware UTC datetime from an API's date field, or None when absent or not understood.

    Relative dates ("3 days ago") give None: they are relative to when the API answered, which
    is not recorded, and a wrong date is worse than no date for the as-of rule.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or _RELATIVE.search(text):
        return None
    parsed: datetime | None = None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        for fmt in _DATE_FORMATS:
            try:
                parsed = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
        else:
            try:
                parsed = parsedate_to_datetime(text)  # RFC 2822, as in some feeds
            except (TypeError, ValueError, IndexError):
                return None
    if parsed.tzinfo is None:
        # Naive timestamps from these APIs are UTC in practice; a day-level error is tolerable.
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures (timeouts, connection errors, 429, 5xx) are retried.

    `sleep` is injectable so tests run without waiting and can see the waits.
    """

    attempts: int = 3
    wait_initial_s: float = 0.5
    wait_max_s: float = 4.0
    retry_after_cap_s: float = 10.0
    sleep: Callable[[float], None] = time.sleep


class _Transient(Exception):
    def __init__(self, cause: str, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("Retry-After")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def _redact(text: str, secrets: Sequence[str]) -> str:
    return redact(text, secrets)  # the one redaction: escaped forms and URL userinfo too


def required_secret(value: SecretStr | None, provider: str, variable: str) -> SecretStr:
    """The configured key, or a SearchError naming the variable that should hold it."""
    if value is None or not value.get_secret_value():
        raise SearchError(f"{provider}: {variable} is not set")
    return value


class HttpSearchProvider:
    """Base for providers that call a JSON web API: owns the client, retries and error mapping.

    `search` is the same for every provider (site filters within the API's query limits, one
    call, results in the shared shape); a provider says how to call its API (`_call`) and where
    the result items are in the answer (`_items`).
    """

    name: str = "http"
    max_sites: int = 0
    max_words: int | None = None  # words past this are ignored by the API: sites are dropped
    max_chars: int | None = None  # longer queries are refused by the API: the bare query is cut
    fields: ResultFields

    def __init__(
        self,
        *,
        timeout_s: float = 10.0,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout_s)
        self._timeout_s = timeout_s
        self._retry = retry if retry is not None else RetryPolicy()

    def close(self) -> None:
        """Close the HTTP client if this provider made it; a passed-in client is the caller's."""
        if self._owns_client:
            self._client.close()

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        if limit <= 0:
            return []
        q = site_query(query, sites, self.max_sites, max_words=self.max_words)
        if self.max_chars is not None and len(q) > self.max_chars:
            q = query.strip()[: self.max_chars]
        data = self._call(q, limit)
        if not isinstance(data, dict):
            raise SearchError(f"{self.name}: unexpected response shape (not a JSON object)")
        return build_results(self.name, self._items(data), query, limit, self.fields)

    def _call(self, q: str, limit: int) -> Any:
        """One request to the API for the site-filtered query `q`; the decoded JSON answer."""
        raise NotImplementedError

    def _items(self, data: dict[str, Any]) -> list[Any]:
        """The result items of an answer (a JSON object), in the API's order."""
        raise NotImplementedError

    def _secrets(self) -> Sequence[str]:
        """Values that must never appear in an error message (API keys)."""
        return ()

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(exc.retry_after, self._retry.retry_after_cap_s)
        policy = self._retry
        backoff = wait_exponential(multiplier=policy.wait_initial_s, max=policy.wait_max_s)
        return float(backoff(state))

    def _request_json(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        json_body: Mapping[str, Any] | None = None,
    ) -> Any:
        """Send the request, retrying transient failures, and return the decoded JSON body.

        `timeout_s` is one deadline for the whole call: every attempt, each read and every wait
        between attempts share it, so neither a dripping server nor the retries can stretch
        it (issue 33)."""
        deadline = Deadline(self._timeout_s, f"search call to {self.name}")
        attempts = [0]

        def attempt() -> httpx.Response:
            attempts[0] += 1
            return self._send_once(
                method, url, params=params, headers=headers, json_body=json_body, deadline=deadline
            )

        retrying = Retrying(
            stop=stop_any(
                stop_after_attempt(max(self._retry.attempts, 1)), stop_at_deadline(deadline)
            ),
            wait=lambda state: min(self._wait(state), deadline.remaining()),
            retry=retry_if_exception_type(_Transient),
            sleep=self._retry.sleep,
            reraise=True,
        )

        def expired() -> SearchError:
            return SearchError(f"{self.name}: {deadline.message()} ({attempts[0]} attempt(s))")

        def call() -> httpx.Response:
            try:
                return retrying(attempt)
            except _Transient as exc:
                if deadline.expired():
                    raise expired() from None
                raise SearchError(
                    f"{self.name}: {exc.cause} (after {attempts[0]} attempts)"
                ) from None

        response = within(call, deadline, expired, name=f"search-{self.name}")
        content = response.content
        try:
            text = content.decode(json.detect_encoding(content))
        except (UnicodeDecodeError, LookupError) as exc:
            raise SearchError(f"{self.name}: response is not valid JSON ({exc})") from None
        try:
            # Strangers' pages fill the answer: nesting and huge numbers are refused, not raised.
            return safejson.loads(text)
        except safejson.UntrustedJSONError as exc:
            raise SearchError(f"{self.name}: response is not valid JSON ({exc})") from None

    def _send_once(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str | int] | None,
        headers: Mapping[str, str] | None,
        json_body: Mapping[str, Any] | None,
        deadline: Deadline,
    ) -> httpx.Response:
        # `from None` throughout: httpx errors carry the request, whose URL or headers may hold
        # the API key; the message we raise says what went wrong without it.
        try:
            with self._client.stream(
                method,
                url,
                params=params,
                headers=headers,
                json=json_body,
                timeout=deadline.timeout(),
            ) as streamed:
                data = self._read_capped(streamed, deadline)
                response = httpx.Response(
                    streamed.status_code,
                    headers=streamed.headers,
                    content=data,
                    request=streamed.request,
                )
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            cause = _redact(f"{type(exc).__name__}: {exc}", self._secrets())
            raise _Transient(cause) from None
        except httpx.HTTPError as exc:
            cause = _redact(f"{type(exc).__name__}: {exc}", self._secrets())
            raise SearchError(f"{self.name}: request failed ({cause})") from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Transient(f"HTTP {status}", _retry_after(response))
        if status >= 400:
            raise SearchError(f"{self.name}: HTTP {status}{self._error_detail(response)}")
        return response

    def _read_capped(self, streamed: httpx.Response, deadline: Deadline) -> bytes:
        """The body, at most `MAX_RESPONSE_BYTES`, the deadline checked after every chunk."""
        too_large = SearchError(f"{self.name}: answer over {MAX_RESPONSE_BYTES:,} bytes")
        declared = streamed.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
            raise too_large
        data = bytearray()
        for chunk in streamed.iter_bytes():
            data += chunk
            if len(data) > MAX_RESPONSE_BYTES:
                raise too_large
            if deadline.expired():
                raise _Transient(deadline.message())
        return bytes(data)

    def _error_detail(self, response: httpx.Response) -> str:
        """A short, redacted excerpt of an error body: APIs explain bad keys or quotas there."""
        try:
            body = response.text
        except (UnicodeDecodeError, httpx.HTTPError):
            return ""
        # Redacted before it is cut: a key cut in two would leave its first part.
        body = _redact(" ".join(body.split()), self._secrets())[:200]
        return f" ({body})" if body else ""


class ConfiguredProvider(HttpSearchProvider, Generic[C]):
    """A provider built from its config section (web search's, or the images section for the
    image services): `_configure` reads and checks the provider's own settings first (a missing
    one raises `SearchError` before any client is made), then the HTTP client gets the timeout
    `_timeout` picks from the section."""

    def __init__(
        self,
        cfg: C,
        *,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._configure(cfg)
        super().__init__(timeout_s=self._timeout(cfg), client=client, retry=retry)

    def _configure(self, cfg: C) -> None:
        """Read this provider's own settings from `cfg`; raise `SearchError` if one is missing."""

    def _timeout(self, cfg: C) -> float:
        raise NotImplementedError


class ConfiguredSearchProvider(ConfiguredProvider[SearchConfig]):
    """A web-search provider: every one waits the search config's timeout."""

    def _timeout(self, cfg: SearchConfig) -> float:
        return cfg.timeout_s


class KeyedSearchProvider(ConfiguredSearchProvider):
    """A provider whose API takes one key from the config (`key_setting`, a `SearchConfig`
    field), named by its environment variable when it is missing and never shown in errors."""

    key_setting: str = ""

    def _configure(self, cfg: SearchConfig) -> None:
        variable = f"FACTNOTE_SEARCH__{self.key_setting.upper()}"
        self._key = required_secret(getattr(cfg, self.key_setting), self.name, variable)

    @property
    def key(self) -> str:
        return self._key.get_secret_value()

    def _secrets(self) -> Sequence[str]:
        return (self.key,)


def as_list(value: object) -> list[Any]:
    """`value` if it is a JSON array, else an empty list (a missing section means no results)."""
    return value if isinstance(value, list) else []


def as_str(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class ResultFields:
    """Where one provider's result items keep the fields every result needs."""

    url: str
    title: str
    snippet: str
    published: Callable[[dict[str, Any]], datetime | None]


def build_results(
    provider: str, items: list[Any], query: str, limit: int, fields: ResultFields
) -> list[SearchResult]:
    """Ranked `SearchResult`s from a provider's result items: items that are not objects or
    whose URL is not http(s) are skipped (a reader could not open them), ranks count from 1."""
    results: list[SearchResult] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        url = as_str(item.get(fields.url))
        if not url.startswith(("http://", "https://")):
            continue
        results.append(
            SearchResult(
                url=url,
                title=as_str(item.get(fields.title)),
                snippet=as_str(item.get(fields.snippet)),
                provider=provider,
                query=query,
                rank=len(results) + 1,
                published=fields.published(item),
            )
        )
        if len(results) >= limit:
            break
    return results
