"""A search provider whose error answer echoes the key (issue 33, finding 3): the SearchError
(what the trace stores and `check --json` prints) carries no form of it, even when the key
holds a quote and a backslash (JSON-escaped in the body) or sits where the 200-character
excerpt is cut."""

from __future__ import annotations

import json

import httpx
import pytest
from pydantic import SecretStr

from pipeline.config import SearchConfig
from pipeline.search.base import SearchError
from pipeline.search.serper import SerperSearch

KEY = 'serper-"quote\\slash-0042'


@pytest.mark.parametrize("padding", [0, 150, 160])  # 150, 160: the key straddles the cut
def test_an_error_body_echoing_the_key_is_redacted_before_it_is_cut(padding: int) -> None:
    # Serper's 403 answer names the key it refused (shape as in tests/fixtures/search and its
    # API's {"message": ..., "statusCode": ...} error objects).
    body = json.dumps({"message": "x" * padding + f" Unauthorized key {KEY}", "statusCode": 403})
    transport = httpx.MockTransport(lambda _: httpx.Response(403, content=body.encode()))
    provider = SerperSearch(
        SearchConfig(serper_api_key=SecretStr(KEY)), client=httpx.Client(transport=transport)
    )
    with pytest.raises(SearchError) as raised:
        provider.search("lemon water flu", limit=3)
    message = str(raised.value)
    assert "HTTP 403" in message
    assert "quote" not in message and "0042" not in message
    assert "serper-" not in message.replace("serper: HTTP", "")
