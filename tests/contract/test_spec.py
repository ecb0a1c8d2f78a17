"""The contract itself: X's published specs are read from ../shared/specs, a missing folder
fails loudly, and a request or answer either spec refuses is caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.contract import spec
from tests.contract.spec import SpecsMissing, exchange, problems

pytestmark = pytest.mark.contract

FEED = "http://127.0.0.1:1/2/notes/search/posts_eligible_for_notes"
JSON = {"Content-Type": "application/json"}


def answer(body: object, status: int = 200, kind: str = "application/json") -> dict[str, Any]:
    return {
        "status": status,
        "response_body": json.dumps(body).encode(),
        "response_headers": {"Content-Type": kind},
    }


def test_missing_specs_fail_with_where_they_were_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("X_OPENAPI_SPECS", str(tmp_path / "nowhere"))
    spec.specs.cache_clear()
    try:
        with pytest.raises(SpecsMissing, match=r"nowhere.*\.\./shared/specs"):
            spec.specs()
    finally:
        monkeypatch.undo()
        spec.specs.cache_clear()


def test_a_feed_request_in_2159_names_asking_for_2167_only_fields_is_caught() -> None:
    mixed = f"{FEED}?test_mode=true&tweet.fields=created_at,note_request_suggestions"
    broken = problems(exchange("GET", mixed, body=None, headers={}, **answer({"meta": {}})))
    assert "note_request_suggestions" in " ".join(broken["2.159"])
    assert "undeclared query parameters ['tweet.fields']" in " ".join(broken["2.167"])


def test_an_evaluate_body_with_an_extra_field_is_caught() -> None:
    body = json.dumps({"note_text": "x https://a.example", "post_id": "1", "lang": "en"})
    ex = exchange(
        "POST",
        "http://127.0.0.1:1/2/notes/evaluate",
        body=body.encode(),
        headers=JSON,
        **answer({"data": {"claim_opinion_score": 0.5}}),
    )
    assert "Additional properties" in " ".join(problems(ex)["2.167"])


def test_an_error_sent_as_plain_json_without_a_problem_type_is_caught() -> None:
    ex = exchange(
        "GET",
        f"{FEED}?test_mode=true",
        body=None,
        headers={},
        **answer({"title": "Too Many Requests"}, status=429),
    )
    assert problems(ex)  # X's errors are application/problem+json with a type


def test_a_well_formed_2159_exchange_keeps_the_contract() -> None:
    page = {
        "data": [{"id": "11", "text": "t", "edit_history_tweet_ids": ["11"]}],
        "meta": {"result_count": 1},
    }
    ex = exchange(
        "GET",
        f"{FEED}?test_mode=true&tweet.fields=note_tweet",
        body=None,
        headers={},
        **answer(page),
    )
    assert problems(ex) == {}
