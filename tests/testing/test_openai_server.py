"""The scripted LLM server keys every request by the step its client names in a header."""

from __future__ import annotations

import httpx

from pipeline.llm.client import STEP_HEADER
from testing.fakes.openai_server import FakeLLM, Reply


def ask(fake: FakeLLM, step: str | None, schema_name: str = "AnySchema") -> httpx.Response:
    headers = {STEP_HEADER: step} if step is not None else {}
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": schema_name}},
    }
    return httpx.post(f"{fake.base_url}/chat/completions", json=body, headers=headers)


def answer(response: httpx.Response) -> str:
    return str(response.json()["choices"][0]["message"]["content"])


def test_the_step_header_picks_the_script_whatever_the_schema_is_called(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script("analyze", Reply.text("analysed"))
    assert answer(ask(fake_llm, "analyze", "AnalysisAnswer")) == "analysed"
    assert answer(ask(fake_llm, "analyze", "RenamedAnalysis")) == "analysed"
    assert fake_llm.calls("analyze") == 2


def test_a_request_without_a_step_is_refused_naming_the_header(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyze", Reply.text("analysed"))
    response = ask(fake_llm, None, "analyze")
    assert response.status_code == 400
    assert STEP_HEADER in response.json()["error"]["message"]


def test_steps_sharing_a_script_take_its_replies_in_call_order(fake_llm: FakeLLM) -> None:
    fake_llm.script(("write", "rewrite"), Reply.text("first"), Reply.text("second"))
    assert answer(ask(fake_llm, "write")) == "first"
    assert answer(ask(fake_llm, "rewrite")) == "second"
    assert [r.key for r in fake_llm.requests_for("write", "rewrite")] == ["write", "rewrite"]
