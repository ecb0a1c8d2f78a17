"""A Google Fact Check Tools `claims:search` endpoint on 127.0.0.1, for `factnote claims sync`.

Shaped after the API reference,
https://developers.google.com/fact-check/tools/api/reference/rest/v1alpha1/claims/search and
.../rest/v1alpha1/claims (the Claim, ClaimReview and Publisher resources):

* `GET /v1alpha1/claims:search`; `query` is required unless `reviewPublisherSiteFilter` is
  given (else 400 INVALID_ARGUMENT); `languageCode` restricts by language, not region;
  `maxAgeDays` keeps claims whose claim date or review date, the later one, is that recent;
  `pageSize` defaults to 10; `pageToken` is the previous page's `nextPageToken`, which is absent
  on the last page. The body is `{"claims": [Claim], "nextPageToken": string}`; with no match
  the API answers `{}`.
* A Claim is `{text, claimant, claimDate, claimReview: [{publisher: {name, site}, url, title,
  reviewDate, textualRating, languageCode}]}`.
* The key is the `key` query parameter or the `X-Goog-Api-Key` header
  (https://cloud.google.com/apis/docs/system-parameters). Errors use Google's JSON error body
  (https://google.aip.dev/193): `{"error": {"code", "message", "status"}}`; a missing key is 403
  PERMISSION_DENIED, a wrong one 400 INVALID_ARGUMENT "API key not valid".

Tests set `claims` (API-shaped dicts, changed in place to make a review change), queue
failures with `fail_next` (HTTP statuses answered before any real page), and read `searches`
(the query parameters of every request received).
"""

from __future__ import annotations

import base64
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

from testing.fakes.http_server import LocalHTTPServer, RecordedRequest, Route

SEARCH_PATH = "/v1alpha1/claims:search"
DEFAULT_PAGE_SIZE = 10


def _error(code: int, status: str, message: str) -> Route:
    body = json.dumps({"error": {"code": code, "message": message, "status": status}})
    return Route(status=code, body=body, content_type="application/json; charset=UTF-8")


def _date(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class FakeFactCheckAPI:
    """`with FakeFactCheckAPI(key="k") as api:` ... `api.url` is the search endpoint."""

    def __init__(self, key: str, claims: list[dict[str, Any]] | None = None) -> None:
        self.key = key
        self.claims: list[dict[str, Any]] = claims or []
        self.fail_next: list[int] = []
        self.searches: list[dict[str, str]] = []
        self.now = datetime.now(UTC)
        self._lock = threading.Lock()
        self._server = LocalHTTPServer()
        self._server.add(SEARCH_PATH, self._answer)

    def __enter__(self) -> FakeFactCheckAPI:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.__exit__(*exc)

    @property
    def url(self) -> str:
        return self._server.url(SEARCH_PATH)

    @property
    def requests(self) -> list[RecordedRequest]:
        return self._server.requests

    def _answer(self, request: RecordedRequest) -> Route:
        params = {k: v[-1] for k, v in parse_qs(urlsplit(request.path).query).items()}
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            self.searches.append(params)
            if self.fail_next:
                status = self.fail_next.pop(0)
                return _error(status, "UNAVAILABLE", "The service is currently unavailable.")
        key = params.get("key") or headers.get("x-goog-api-key")
        if not key:
            return _error(
                403,
                "PERMISSION_DENIED",
                "The request is missing a valid API key.",
            )
        if key != self.key:
            return _error(
                400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."
            )
        if not params.get("query") and not params.get("reviewPublisherSiteFilter"):
            return _error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.")
        found = [c for c in self._copy() if self._matches(c, params)]
        size = int(params.get("pageSize") or DEFAULT_PAGE_SIZE)
        start = int(base64.urlsafe_b64decode(params["pageToken"])) if params.get("pageToken") else 0
        body: dict[str, Any] = {}
        if found[start : start + size]:
            body["claims"] = found[start : start + size]
        if start + size < len(found):
            body["nextPageToken"] = base64.urlsafe_b64encode(str(start + size).encode()).decode()
        return Route(body=json.dumps(body), content_type="application/json; charset=UTF-8")

    def _copy(self) -> list[dict[str, Any]]:
        with self._lock:
            return json.loads(json.dumps(self.claims))

    def _matches(self, claim: dict[str, Any], params: dict[str, str]) -> bool:
        reviews = claim.get("claimReview") or []
        query = params.get("query", "").casefold().split()
        if query and not all(word in str(claim.get("text", "")).casefold() for word in query):
            return False
        site = params.get("reviewPublisherSiteFilter")
        if site and not any((r.get("publisher") or {}).get("site") == site for r in reviews):
            return False
        language = params.get("languageCode", "").split("-")[0].lower()
        if language and not any(
            str(r.get("languageCode", "")).split("-")[0].lower() == language for r in reviews
        ):
            return False
        if params.get("maxAgeDays"):
            dates = [_date(claim.get("claimDate"))] + [_date(r.get("reviewDate")) for r in reviews]
            latest = max((d for d in dates if d is not None), default=None)
            cutoff = self.now - timedelta(days=int(params["maxAgeDays"]))
            if latest is None or latest < cutoff:
                return False
        return True
