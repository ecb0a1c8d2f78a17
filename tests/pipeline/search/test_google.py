import json
from functools import partial

import httpx
import pytest

from tests.pipeline.search.scripted import Script, answered_by, fixture_response

make = partial(answered_by, "google")
fixture = partial(fixture_response, "google")


def test_site_filter_keeps_within_googles_32_words() -> None:
    query = " ".join(f"word{i}" for i in range(26))
    script = Script([fixture()])
    make(script).search(query, limit=3, sites=["a.org", "b.org", "c.org", "d.org", "e.org"])
    q = script.requests[0].url.params["q"]
    assert len(q.split()) <= 32
    assert q == query + " (site:a.org OR site:b.org OR site:c.org)"


@pytest.mark.parametrize("status", [400, 403])
def test_client_errors_show_the_api_explanation(status: int) -> None:
    body = {"error": {"code": status, "message": "Request contains an invalid argument."}}
    script = Script([httpx.Response(status, content=json.dumps(body).encode())])
    with pytest.raises(Exception, match="invalid argument") as info:
        make(script).search("q", limit=3)
    assert len(script.requests) == 1
    assert f"HTTP {status}" in str(info.value)
