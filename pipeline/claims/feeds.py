"""Where the claim index's fact-checks come from in production: the Google Fact Check Tools API
and ClaimReview feed dumps, read a page at a time for `factnote claims sync`.

* `FactCheckSearch` pages through `GET .../v1alpha1/claims:search` (API reference:
  https://developers.google.com/fact-check/tools/api/reference/rest/v1alpha1/claims/search):
  `query` or `reviewPublisherSiteFilter` (one is required), `languageCode`, `maxAgeDays`,
  `pageSize`, `pageToken` from the previous page's `nextPageToken` (absent or empty: the last
  page). The key travels in the `X-Goog-Api-Key` header, one of the two places Google's API
  platform reads it from (https://cloud.google.com/apis/docs/system-parameters), so that it
  is never part of a URL that an error message, a log line or a proxy could show.
* `read_feed` reads a ClaimReview feed dump: the Data Commons fact-check feed
  (https://datacommons.org/factcheck/download) is a schema.org `DataFeed`
  (https://schema.org/DataFeed) whose `dataFeedElement[]` are `DataFeedItem`s, each with an
  `item` (one ClaimReview or a list of them, https://schema.org/ClaimReview). The JSON-LD
  reader of `pipeline.claims.claimreview` walks that tree like any other, so a feed is imported
  exactly as `factnote claims import` imports a file.

Both give `pipeline.claims.claimreview.ImportResult`s: the records read and one line per review left
out (malformed), never a silent loss. A technical failure (an HTTP error, a timeout, a body
that is not the API's JSON) raises `SourceFailure`, which the caller reports as that source's
failure while the other sources go on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from pipeline import safejson
from pipeline.capped_read import CappedReadError, read_capped
from pipeline.claims.claimreview import (
    ClaimImportError,
    ImportResult,
    read_factcheck_api,
    read_json,
)
from pipeline.failures import PipelineFailure

FACTCHECK_API_URL = "https://factchecktools.googleapis.com/v1alpha1/claims:search"
API_MAX_PAGE_SIZE = 1000  # larger pages are not asked for: a failed page costs less
_API_BODY_CAP = 20_000_000  # one page of JSON; a page of 1000 claims is well under 5 MB


class SourceFailure(PipelineFailure, RuntimeError):
    """A source could not be read (network, HTTP status, not the expected data). The message
    names no key and no URL with a key in it."""

    stage = "claim_sync"


@dataclass(frozen=True)
class ApiSearch:
    """One `claims:search` a sync repeats: a text query or a publisher's site, and a
    language."""

    query: str = ""
    publisher: str = ""
    language: str = ""

    @property
    def name(self) -> str:
        what = f"query={self.query}" if self.query else f"site={self.publisher}"
        return f"factcheck-api:{what}" + (f":{self.language}" if self.language else "")

    def params(self, max_age_days: int, page_size: int) -> dict[str, str | int]:
        params: dict[str, str | int] = {"maxAgeDays": max_age_days, "pageSize": page_size}
        if self.query:
            params["query"] = self.query
        if self.publisher:
            params["reviewPublisherSiteFilter"] = self.publisher
        if self.language:
            params["languageCode"] = self.language
        return params


@dataclass
class ApiPage:
    result: ImportResult
    number: int  # 1 for the first page
    more: bool  # the API gave a nextPageToken


class FactCheckSearch:
    """Pages of one `claims:search`, read with `client` (an `httpx.Client` the caller owns)."""

    def __init__(
        self,
        client: httpx.Client,
        api_key: str,
        *,
        url: str = FACTCHECK_API_URL,
        page_size: int = 100,
        max_pages: int = 20,
    ) -> None:
        if not api_key:
            raise SourceFailure(
                "no Fact Check Tools API key (set FACTNOTE_FACTCHECK_API_KEY in the environment)"
            )
        self._client, self._key, self.url = client, api_key, url
        self.page_size = max(1, min(page_size, API_MAX_PAGE_SIZE))
        self.max_pages = max(1, max_pages)

    def pages(self, search: ApiSearch, max_age_days: int) -> Iterator[ApiPage]:
        """Every page of `search` over the last `max_age_days` days, up to `max_pages`; the
        last page yielded says whether the API had more."""
        token = ""
        for number in range(1, self.max_pages + 1):
            params = search.params(max_age_days, self.page_size)
            if token:
                params["pageToken"] = token
            data = self._get(params)
            next_token = data.get("nextPageToken") or ""
            if not isinstance(next_token, str):
                raise SourceFailure("the API's nextPageToken is not a string")
            token = next_token
            try:
                result = read_factcheck_api(data)
            except ClaimImportError as exc:
                raise SourceFailure(f"page {number}: {exc}") from exc
            yield ApiPage(result=result, number=number, more=bool(token))
            if not token:
                return

    def _get(self, params: dict[str, str | int]) -> dict[str, object]:
        try:
            response = self._client.get(
                self.url,
                params=params,
                headers={"X-Goog-Api-Key": self._key, "Accept": "application/json"},
            )
        except httpx.TimeoutException as exc:
            raise SourceFailure(f"the Fact Check API timed out ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            # httpx's message can carry the request URL; the type says enough.
            raise SourceFailure(f"cannot reach the Fact Check API ({type(exc).__name__})") from exc
        if response.status_code != 200:
            raise SourceFailure(
                f"the Fact Check API answered HTTP {response.status_code}" + _api_error(response)
            )
        if len(response.content) > _API_BODY_CAP:
            raise SourceFailure("the Fact Check API's page is larger than any real page")
        try:
            data = safejson.loads(response.text)
        except safejson.UntrustedJSONError as exc:
            raise SourceFailure(f"the Fact Check API's page is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise SourceFailure("the Fact Check API's page is not a JSON object")
        return data


def _api_error(response: httpx.Response) -> str:
    """Google's error body (https://google.aip.dev/193: `{"error": {"code", "message",
    "status"}}`) as a short suffix, when there is one."""
    try:
        body = safejson.loads(response.text[:4000])
    except safejson.UntrustedJSONError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ""
    status, message = str(error.get("status") or ""), str(error.get("message") or "")
    text = ": ".join(part for part in (status, message[:200]) if part)
    return f" ({text})" if text else ""


# --- feed dumps ------------------------------------------------------------------------------


@dataclass
class FeedRead:
    result: ImportResult
    digest: str  # sha256 of the dump as read: the same digest is the same dump


def is_url(location: str) -> bool:
    return location.lower().startswith(("http://", "https://"))


def read_feed(
    location: str, client: httpx.Client, *, max_bytes: int, known_digest: str | None = None
) -> FeedRead | None:
    """The reviews of the feed dump at `location` (a file or an http(s) URL the deployer
    configured), or None when its digest is `known_digest` (the dump has not changed since
    the last sync). Raises `SourceFailure` when it cannot be read as a whole."""
    data = _feed_bytes(location, client, max_bytes)
    digest = hashlib.sha256(data).hexdigest()
    if digest == known_digest:
        return None
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    try:
        result = read_json(safejson.loads(text))
    except (safejson.UntrustedJSONError, ClaimImportError) as exc:
        raise SourceFailure(f"not a ClaimReview feed: {exc}") from exc
    if result.reviews == 0 and not result.records:
        raise SourceFailure("not a ClaimReview feed: it holds no ClaimReview")
    return FeedRead(result=result, digest=digest)


def _feed_bytes(location: str, client: httpx.Client, max_bytes: int) -> bytes:
    if not is_url(location):
        path = Path(location)
        if not path.is_file():
            raise SourceFailure("no such file")
        try:
            return read_capped(path, max_bytes)
        except CappedReadError as exc:
            raise SourceFailure(str(exc)) from exc
        except OSError as exc:
            raise SourceFailure(f"cannot read: {exc.strerror or exc}") from exc
    try:
        with client.stream("GET", location) as response:
            if response.status_code != 200:
                raise SourceFailure(f"HTTP {response.status_code}")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise SourceFailure(f"larger than {max_bytes} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
    except httpx.TimeoutException as exc:
        raise SourceFailure(f"timed out ({type(exc).__name__})") from exc
    except httpx.HTTPError as exc:
        raise SourceFailure(f"cannot fetch ({type(exc).__name__})") from exc
