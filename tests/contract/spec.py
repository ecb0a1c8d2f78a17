"""X's published OpenAPI specs as the contract for what the X adapters send and the fakes answer.

The specs are read from `../shared/specs/` beside the repository (X's own SDK generator
repository `xdevplatform/xdk`: spec 2.159 and spec 2.167; see the README there), never copied
into it. `X_OPENAPI_SPECS` points elsewhere (a worktree whose parent holds no `shared/`).

One exchange (a request and the answer to it) keeps the contract when it is valid under at
least one of the two specs, the request and its answer under the same one: the specs disagree
(the evaluate path, `tweet.fields`/`post.fields`, `note_tweet`/`note_post`), and the adapters
speak each dialect whole, never a mix. Validation is `openapi-core`'s (parameters by their
declared style and schema, bodies by their media type's schema, answers by status code and
content type). On top of it: every query parameter sent must be one the operation declares,
because X answers an undeclared one with a 400 while OpenAPI lets it through.
"""

from __future__ import annotations

import copy
import json
import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import requests
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

REPO = Path(__file__).resolve().parents[2]
VERSIONS = ("2.159", "2.167")
SPEC_HOST = "https://api.x.com"


class SpecsMissing(RuntimeError):
    """The published specs are not where the contract tests read them."""


def specs_dir() -> Path:
    configured = os.environ.get("X_OPENAPI_SPECS")
    return Path(configured) if configured else REPO.parent / "shared" / "specs"


@dataclass(frozen=True)
class Spec:
    version: str
    raw: dict[str, Any]
    api: OpenAPI


@cache
def specs() -> tuple[Spec, ...]:
    folder = specs_dir()
    loaded = []
    for version in VERSIONS:
        path = folder / f"x-api-v2-openapi-{version}.json"
        if not path.is_file():
            raise SpecsMissing(
                f"X OpenAPI spec {version} not found at {path}: the contract tests read X's "
                "published specs from ../shared/specs beside the repository (CI provides it; "
                "set X_OPENAPI_SPECS to the folder elsewhere)"
            )
        raw = json.loads(path.read_text(encoding="utf-8"))
        # The specs validate as OpenAPI 3.0 documents upstream; checking all 130-odd paths
        # on every load would only slow the suite.
        config = Config(
            spec_validator_cls=None,
            # X's errors come as RFC 7807 problems, which openapi-core does not read itself.
            extra_media_type_deserializers={"application/problem+json": json.loads},
        )
        api = OpenAPI.from_dict(copy.deepcopy(raw), config=config)
        loaded.append(Spec(version, raw, api))
    return tuple(loaded)


@dataclass(frozen=True)
class Exchange:
    """One request on the wire and the answer it got."""

    request: requests.PreparedRequest
    response: requests.Response
    off_spec: str | None = None  # why this answer is deliberately outside the spec


def exchange(
    method: str,
    url: str,
    *,
    body: bytes | None,
    headers: dict[str, str],
    status: int,
    response_body: bytes,
    response_headers: dict[str, str],
    off_spec: str | None = None,
) -> Exchange:
    """An exchange from what a fake server saw and answered."""
    request = requests.Request(method, url, data=body or None, headers=headers).prepare()
    response = requests.Response()
    response.status_code = status
    response._content = response_body
    response.headers.update(response_headers)
    response.url = url
    return Exchange(request, response, off_spec)


def _on_spec_host(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """The request as sent to the spec's server (the fakes listen on loopback, tweepy on
    api.twitter.com): only the path and query are the contract."""
    moved = request.copy()
    parts = urlsplit(request.url or "")
    moved.url = urlunsplit(("https", "api.x.com", parts.path, parts.query, ""))
    return moved


def _operation(spec: Spec, method: str, path: str) -> dict[str, Any] | None:
    for template, item in spec.raw["paths"].items():
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, path) and method.lower() in item:
            operation: dict[str, Any] = item[method.lower()]
            return operation
    return None


def _declared(spec: Spec, operation: dict[str, Any]) -> set[str]:
    names = set()
    for param in operation.get("parameters", []):
        if "$ref" in param:
            param = spec.raw["components"]["parameters"][param["$ref"].rsplit("/", 1)[1]]
        if param.get("in") == "query":
            names.add(param["name"])
    return names


def problems_under(spec: Spec, ex: Exchange) -> list[str]:
    """Why `ex` breaks `spec` (empty when it keeps it)."""
    request = _on_spec_host(ex.request)
    parts = urlsplit(request.url or "")
    operation = _operation(spec, request.method or "", parts.path)
    if operation is None:
        return [f"{request.method} {parts.path}: no such operation"]
    found = []
    sent = {name for name, _ in parse_qsl(parts.query, keep_blank_values=True)}
    undeclared = sorted(sent - _declared(spec, operation))
    if undeclared:
        found.append(f"undeclared query parameters {undeclared}")
    with warnings.catch_warnings():
        # The spec's OAuth 1.0a scheme ("http"/"OAuth") is one openapi-core cannot check.
        warnings.filterwarnings("ignore", "Unsupported scheme type", UserWarning)
        openapi_request = RequestsOpenAPIRequest(request)
        try:
            spec.api.validate_request(openapi_request)
        except Exception as exc:  # openapi-core's errors share no narrower base
            found.append(f"request: {_explain(exc)}")
        if ex.off_spec is None:
            try:
                spec.api.validate_response(openapi_request, RequestsOpenAPIResponse(ex.response))
            except Exception as exc:
                found.append(f"response {ex.response.status_code}: {_explain(exc)}")
    return found


def problems(ex: Exchange) -> dict[str, list[str]]:
    """{spec version: why} when no spec accepts `ex` whole; {} when one does."""
    found: dict[str, list[str]] = {}
    for spec in specs():
        broken = problems_under(spec, ex)
        if not broken:
            return {}
        found[spec.version] = broken
    return found


def _explain(exc: Exception) -> str:
    """The failing places and rules, without the (long) value that failed."""
    parts = [type(exc).__name__]
    cause: BaseException | None = exc.__cause__
    if cause is None:
        parts.append(_text(exc))
    while cause is not None:
        errors = getattr(cause, "schema_errors", None)
        if errors:
            parts += [f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors]
        else:
            parts.append(_text(cause))
        cause = cause.__cause__
    return " | ".join(p[:400] for p in parts if p)


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # some of openapi-core's errors cannot print the bytes they hold
        return type(exc).__name__


@dataclass
class Tally:
    """How many exchanges the contract checked in this session (for the terminal summary)."""

    requests: int = 0
    responses: int = 0
    off_spec: int = 0


TALLY = Tally()


def check(exchanges: Iterable[Exchange]) -> list[str]:
    """Validates every exchange; returns one line per broken one (empty when all keep it)."""
    failures = []
    for ex in exchanges:
        TALLY.requests += 1
        if ex.off_spec is None:
            TALLY.responses += 1
        else:
            TALLY.off_spec += 1
        broken = problems(ex)
        if broken:
            where = f"{ex.request.method} {urlsplit(ex.request.url or '').path}"
            detail = "; ".join(f"[{v}] {' / '.join(p)}" for v, p in broken.items())
            failures.append(f"{where} -> {ex.response.status_code}: {detail}")
    return failures
