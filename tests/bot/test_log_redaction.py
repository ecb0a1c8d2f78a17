"""Transition lines with a key holding a quote and a backslash (issue 33, finding 3): the
reason is masked before it is escaped into the line, and the escaped forms after, in text and
in JSON; and URL credentials in any logged line (an HTTP client's request line)."""

from __future__ import annotations

import io
import logging

import pytest

from bot import logs

KEY = 'sk-"quote\\slash-0042'


@pytest.mark.parametrize("formatter", [logs.TextFormatter, logs.JsonFormatter])
def test_a_key_with_a_quote_and_a_backslash_never_reaches_a_transition_line(
    formatter: type[logging.Formatter], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs, "_active_secrets", [KEY])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter([KEY]))  # type: ignore[call-arg]
    logs.log.addHandler(handler)
    logs.log.setLevel(logging.INFO)
    try:
        logs.log_transition(
            5, "x", "failed", error=f"HTTP 401: Incorrect API key provided: {KEY}", reason=KEY
        )
    finally:
        logs.log.removeHandler(handler)
    line = stream.getvalue()
    assert "Incorrect API key provided: ***" in line
    assert "quote" not in line and "0042" not in line


def test_url_credentials_never_reach_a_line_even_unconfigured() -> None:
    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, 'HTTP Request: POST %s "HTTP/1.1 401"', None, None
    )
    record.args = ("http://proxyuser:BASEPW-77@127.0.0.1:8080/v1/chat/completions",)
    for formatter in (logs.TextFormatter(), logs.JsonFormatter()):
        line = formatter.format(record)
        assert "BASEPW" not in line and "proxyuser:***@127.0.0.1" in line
