from datetime import UTC, datetime
from functools import partial

import httpx

from tests.pipeline.search.scripted import Script, answered_by

make = partial(answered_by, "brave")


def test_absolute_age_is_used_when_page_age_is_missing() -> None:
    body = {"web": {"results": [{"url": "https://a.org/x", "age": "March 4, 2019"}]}}
    results = make(Script([httpx.Response(200, json=body)])).search("q", limit=3)
    assert results[0].published == datetime(2019, 3, 4, tzinfo=UTC)
