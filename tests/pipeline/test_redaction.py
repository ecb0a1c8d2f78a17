"""The one redaction (issue 33, finding 3): URL credentials masked wherever a URL is written,
and a secret masked in every form a text may carry it (escaped for JSON once or twice, by
repr, percent-encoded)."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from pipeline.redaction import redact, shown_url

KEY = 'sk-"quote\\slash-0042'


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql+psycopg://postgres:hunter2pw@db.example:5432/factnote",
            "postgresql+psycopg://postgres:***@db.example:5432/factnote",
        ),
        ("https://user:p@ss@proxy.example/v1", "https://user:***@proxy.example/v1"),
        ("https://sk-token@proxy.example/v1", "https://***@proxy.example/v1"),
        ("https://proxy.example/v1?mail=a@b.example", "https://proxy.example/v1?mail=a@b.example"),
        ("sqlite:///data/factnote.db", "sqlite:///data/factnote.db"),
    ],
)
def test_a_urls_credentials_are_masked_and_the_rest_kept(url: str, shown: str) -> None:
    assert shown_url(url) == shown
    assert redact(f"audit data: {url} (ok)") == f"audit data: {shown} (ok)"


@pytest.mark.parametrize(
    "carried",
    [
        KEY,
        json.dumps(KEY)[1:-1],  # in a JSON string
        json.dumps(json.dumps(KEY)[1:-1])[1:-1],  # a JSON line quoting a JSON-escaped reason
        repr(KEY)[1:-1],
        quote(KEY, safe=""),
    ],
)
def test_a_secret_is_masked_in_every_escaped_form(carried: str) -> None:
    line = redact(f'error="Incorrect API key provided: {carried}." next', [KEY])
    assert line == 'error="Incorrect API key provided: ***." next'
    assert "quote" not in line and "0042" not in line


def test_short_values_are_not_treated_as_secrets() -> None:
    assert redact("the abc of it", ["abc"]) == "the abc of it"
