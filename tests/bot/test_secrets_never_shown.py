"""Issue 33, finding 3: secrets are never printed, logged or stored.

`factnote check --json`, `factnote run --once` and `factnote status` run as real processes
with known secrets: a PostgreSQL URL with a password (the throwaway cluster, tests/postgres.py,
trusts loopback, so the password is carried but never checked), an LLM key holding a quote and
a backslash (escaped differently by every JSON or repr that carries it), credentials in the LLM
base URL, a search key and the web secret. The LLM (the scripted server on loopback) answers
every call 401 with OpenAI's error body echoing the key. Then every output, every file the
run left and every row of every table is searched for each secret's distinctive core: any
escaped form of a secret contains its core, so finding none rules them all out."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from testing.fakes.openai_server import FakeLLM, Reply

REPO = Path(__file__).resolve().parents[2]
FACTNOTE = [sys.executable, "-m", "bot.cli"]

# Each secret is built around a core no escaping changes (letters and digits only).
DB_PASSWORD = "dbPWcore5120"
LLM_KEY = 'sk-"LLMKEYcore4411\\tail'  # a quote and a backslash
BASE_USER, BASE_PASSWORD = "proxyuser", "BASEPWcore7730"
SEARCH_KEY = "SEARCHKEYcore9902"
WEB_SECRET = "WEBSECRETcore3318-long-enough-for-signing-cookies"
CORES = ("dbPWcore5120", "LLMKEYcore4411", "BASEPWcore7730", "SEARCHKEYcore9902", "WEBSECRETcore")


def _invalid_key(key: str) -> Reply:
    """OpenAI's answer to a bad key (HTTP 401, `invalid_api_key`), as its API reference and
    the openai-python SDK's `AuthenticationError` read it; OpenAI masks most of the key, a
    self-hosted proxy may echo it whole, which is what this one does."""
    return Reply.error(
        401,
        {
            "error": {
                "message": f"Incorrect API key provided: {key}.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    )


def _factnote(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FACTNOTE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _tables(url: str) -> str:
    """Every row of every table, as text."""
    engine = create_engine(url)
    rows: list[str] = []
    try:
        with engine.connect() as connection:
            for table in inspect(engine).get_table_names():
                for row in connection.execute(text(f'SELECT * FROM "{table}"')):
                    rows.append(f"{table}: {json.dumps(list(row), default=str)} {tuple(row)!r}")
    finally:
        engine.dispose()
    return "\n".join(rows)


def _files(root: Path) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file()
    )


@pytest.mark.postgres
def test_no_secret_reaches_any_output_log_file_or_table(
    tmp_path: Path, fake_llm: FakeLLM, postgres_url: str
) -> None:
    fake_llm.script(("analyze", "evidence", "write", "describe"), _invalid_key(LLM_KEY))
    db_url = make_url(postgres_url).set(password=DB_PASSWORD).render_as_string(False)
    base = fake_llm.base_url.replace("http://", f"http://{BASE_USER}:{BASE_PASSWORD}@")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    summons = {
        "id": "s1",
        "author": "asker_demo",
        "text": "@factnote is this true?",
        "created_at": "2026-11-29T09:00:00Z",
        "parent": {
            "id": "p1",
            "author": "claimer_demo",
            "text": "Drinking hot lemon water every hour kills the flu virus.",
            "created_at": "2026-11-29T08:00:00Z",
        },
    }
    (inbox / "s1.json").write_text(json.dumps(summons), encoding="utf-8")
    config = tmp_path / "factnote.toml"
    config.write_text(
        f'[local]\ninbox = "{inbox}"\noutbox = "{tmp_path / "outbox.jsonl"}"\n'
        "[runtime]\nmax_summons_age_s = 0\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FACTNOTE_", "OPENAI_"))}
    env |= {
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "1000",  # rich wraps narrower output, which could split a secret's core
        "FACTNOTE_CONFIG": str(config),
        "FACTNOTE_DATABASE_URL": db_url,
        "FACTNOTE_LLM_BASE_URL": base,
        "FACTNOTE_LLM_MODEL": "fake-model",
        "FACTNOTE_LLM_API_KEY": LLM_KEY,
        "FACTNOTE_SEARCH__SERPER_API_KEY": SEARCH_KEY,
        "FACTNOTE_WEB_SECRET": WEB_SECRET,
    }
    # `check` sends the key (a base URL without credentials: with them, httpx sends those as
    # Basic auth instead); `run --once` the base URL's credentials.
    runs = {
        "check": _factnote(
            ["--log-level", "debug", "check", "Lemon water kills the flu virus.", "--json"],
            {**env, "FACTNOTE_LLM_BASE_URL": fake_llm.base_url},
            tmp_path,
        ),
        "run --once": _factnote(["--log-level", "debug", "run", "--once"], env, tmp_path),
        "status": _factnote(["status"], env, tmp_path),
    }
    # The secrets reached the LLM, and its 401 came back: the echo path really ran.
    sent = [r.headers["authorization"] for r in fake_llm.requests]
    basic = base64.b64encode(f"{BASE_USER}:{BASE_PASSWORD}".encode()).decode()
    assert sent == [f"Bearer {LLM_KEY}", f"Basic {basic}"]
    checked: dict[str, Any] = json.loads(runs["check"].stdout)
    assert "HTTP 401" in checked["error"] and "Incorrect API key provided: ***" in checked["error"]
    assert "audit data: postgresql+psycopg://postgres:***@" in runs["status"].stdout
    assert f"LLM: fake-model at http://{BASE_USER}:***@127.0.0.1" in runs["run --once"].stderr
    assert "HTTP Request: POST http://" in runs["check"].stderr  # httpx's request lines, masked
    stored = _tables(postgres_url)
    assert "Incorrect API key provided: ***" in stored  # decisions.error, llm_calls.error
    everything = {
        **{f"{name} stdout": r.stdout for name, r in runs.items()},
        **{f"{name} stderr": r.stderr for name, r in runs.items()},
        "files": _files(tmp_path),
        "tables": stored,
    }
    leaks = [
        (where, core)
        for where, out in everything.items()
        for core in (*CORES, basic)
        if core in out
    ]
    assert leaks == []
