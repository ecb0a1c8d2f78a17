"""The LLM client against a real local OpenAI-compatible HTTP server (testing/fakes)."""

from __future__ import annotations

import itertools
import json
import threading
import time
from enum import StrEnum
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel, Field, SecretStr

from pipeline.config import LLMConfig
from pipeline.llm.client import (
    BACKOFF_MAX_S,
    RETRY_AFTER_MAX_S,
    STEP_HEADER,
    CallLedger,
    LLMClient,
    LLMDeadlineExceeded,
    LLMInvalidOutput,
    LLMNotConfigured,
    LLMPromptTooLong,
    LLMTransportError,
)
from pipeline.llm.output import strict_json_schema, strip_fence
from pipeline.records import LLMCall
from pipeline.web.deadline import Deadline
from testing.fakes.openai_server import FakeLLM, Reply, message_chars


class Color(StrEnum):
    RED = "red"
    BLUE = "blue"


class Item(BaseModel):
    title: str
    score: float = Field(ge=0.0, le=1.0)
    color: Color = Color.RED


class Answer(BaseModel):
    """A nested answer."""

    label: Literal["yes", "no"]
    items: list[Item] = Field(default_factory=list)
    best: Item | None = None
    note: str = ""


GOOD = {"label": "yes", "items": [{"title": "a", "score": 0.5, "color": "blue"}], "best": None}


class Recorder:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def client(fake: FakeLLM, sleep: Recorder | None = None, **overrides: Any) -> LLMClient:
    return LLMClient(fake.config(**overrides), sleep=sleep or Recorder())


def ask(llm: LLMClient, ledger: CallLedger, **kw: Any) -> Answer:
    return llm.structured(
        "analyse", system="sys", user="the post", schema=Answer, ledger=ledger, **kw
    )


def walk(node: Any) -> list[dict[str, Any]]:
    """Every dict in a JSON tree."""
    if isinstance(node, dict):
        return [node, *(d for v in node.values() for d in walk(v))]
    if isinstance(node, list):
        return [d for v in node for d in walk(v)]
    return []


# --- strict schema ---


def test_strict_schema_inlines_defs_and_requires_every_property_at_every_level() -> None:
    schema = strict_json_schema(Answer)
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    objects = [d for d in walk(schema) if d.get("type") == "object"]
    assert len(objects) == 3  # Answer, the list's Item, the optional Item
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    assert schema["required"] == ["label", "items", "best", "note"]
    assert schema["properties"]["label"]["enum"] == ["yes", "no"]
    item = schema["properties"]["items"]["items"]
    assert item["properties"]["color"]["enum"] == ["red", "blue"]
    assert item["properties"]["score"]["minimum"] == 0.0
    # A property called "title" is kept; schema titles and defaults are dropped.
    assert "title" in item["properties"]
    assert all("default" not in d for d in walk(schema))
    assert schema["properties"]["best"]["anyOf"][1] == {"type": "null"}


def test_strict_schema_rejects_recursive_models_and_free_form_dicts() -> None:
    class Node(BaseModel):
        child: Node | None = None

    class Bag(BaseModel):
        weights: dict[str, float]

    with pytest.raises(ValueError, match="recursive"):
        strict_json_schema(Node)
    with pytest.raises(ValueError, match="dict"):
        strict_json_schema(Bag)


def test_strip_fence_only_unwraps_a_whole_fenced_block() -> None:
    assert strip_fence('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_fence('  ```\n{"a": 1}```  ') == '{"a": 1}'
    assert strip_fence('{"a": "```"}') == '{"a": "```"}'


# --- structured answers ---


def test_valid_structured_answer_is_parsed_into_the_model(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", GOOD)
    ledger = CallLedger()
    result = ask(client(fake_llm), ledger)
    assert result == Answer(label="yes", items=[Item(title="a", score=0.5, color=Color.BLUE)])
    [call] = ledger.calls
    assert (call.step, call.model, call.ok, call.attempts, call.error) == (
        "analyse",
        "fake-model",
        True,
        1,
        None,
    )


def test_request_carries_strict_schema_model_temperature_and_limits(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", GOOD)
    ask(client(fake_llm, max_output_tokens=321), CallLedger())
    [req] = fake_llm.requests
    body = req.body
    assert req.path == "/v1/chat/completions"
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 321
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "the post"},
    ]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Answer", "schema": strict_json_schema(Answer), "strict": True},
    }
    assert req.headers["authorization"] == "Bearer not-needed"


def test_every_request_names_its_step_so_renaming_a_schema_keeps_the_script(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script("analyse", GOOD)
    renamed = type("RenamedAnswer", (Answer,), {})
    llm = client(fake_llm)
    llm.structured("analyse", system="s", user="u", schema=Answer, ledger=CallLedger())
    again = llm.structured("analyse", system="s", user="u", schema=renamed, ledger=CallLedger())
    assert again.label == "yes"
    first, second = fake_llm.requests
    assert second.body["response_format"]["json_schema"]["name"] == "RenamedAnswer"
    assert first.headers[STEP_HEADER.lower()] == second.headers[STEP_HEADER.lower()] == "analyse"
    assert first.key == second.key == "analyse"


def test_configured_api_key_is_sent_and_max_tokens_overrides_default(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", GOOD)
    ask(client(fake_llm, api_key=SecretStr("sk-test-key")), CallLedger(), max_tokens=50)
    [req] = fake_llm.requests
    assert req.headers["authorization"] == "Bearer sk-test-key"
    assert req.body["max_tokens"] == 50


def test_garbage_then_valid_is_one_ok_call_with_two_attempts(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", "I think the answer is yes!", GOOD)
    ledger = CallLedger()
    assert ask(client(fake_llm), ledger).label == "yes"
    [call] = ledger.calls
    assert call.ok and call.attempts == 2
    second = fake_llm.requests[1].messages
    assert len(second) == 3
    assert second[2]["role"] == "user"
    assert "previous answer was invalid" in second[2]["content"]
    assert "not valid JSON" in second[2]["content"]


def test_persistent_garbage_raises_invalid_output_and_records_a_failed_call(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script("analyse", "garbage " * 200)
    ledger = CallLedger()
    with pytest.raises(LLMInvalidOutput) as info:
        ask(client(fake_llm, invalid_retries=2), ledger)
    assert fake_llm.calls("analyse") == 3
    assert info.value.step == "analyse"
    assert info.value.raw.startswith("garbage garbage")
    assert len(info.value.raw) <= 500
    [call] = ledger.calls
    assert not call.ok and call.attempts == 3
    assert call.error == str(info.value)
    assert "not valid JSON" in call.error


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply.text(""), "empty"),
        (Reply.text("   \n"), "empty"),
        (Reply.json({**GOOD, "label": "maybe"}), "label"),
        (Reply.json({**GOOD, "items": [{"title": "a", "score": "high"}]}), "items.0.score"),
        (Reply.json(GOOD, finish_reason="length"), "cut off"),
        (Reply.refused("I cannot help with that"), "I cannot help with that"),
        (Reply.text("[1, 2]"), "schema"),
        (Reply.text("[" * 5000 + "]" * 5000), "nested deeper than 64 levels"),
        (Reply.text('{"label": ' + "9" * 5000 + "}"), "unreadable JSON"),
    ],
    ids=[
        "empty",
        "blank",
        "bad-literal",
        "wrong-type",
        "truncated",
        "refusal",
        "not-object",
        "too-deep",
        "huge-number",
    ],
)
def test_unusable_answers_are_invalid_output(fake_llm: FakeLLM, reply: Reply, reason: str) -> None:
    fake_llm.script("analyse", reply)
    ledger = CallLedger()
    with pytest.raises(LLMInvalidOutput, match="invalid LLM output") as info:
        ask(client(fake_llm, invalid_retries=0), ledger)
    assert reason in str(info.value)
    assert fake_llm.calls("analyse") == 1
    assert not ledger.calls[0].ok


def test_fenced_json_from_a_lenient_server_is_accepted(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", Reply.text(f"```json\n{json.dumps(GOOD)}\n```"))
    ledger = CallLedger()
    assert ask(client(fake_llm, invalid_retries=0), ledger).items[0].title == "a"
    assert ledger.calls[0].attempts == 1


# --- transient and permanent transport errors ---


def test_rate_limit_is_retried_after_the_servers_retry_after(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", Reply.error(429, headers={"retry-after": "2"}), GOOD)
    sleep = Recorder()
    ledger = CallLedger()
    assert ask(client(fake_llm, sleep), ledger).label == "yes"
    assert sleep.sleeps == [2.0]
    assert fake_llm.calls("analyse") == 2
    assert ledger.calls[0].ok and ledger.calls[0].attempts == 2


def test_a_long_retry_after_is_capped(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", Reply.error(429, headers={"retry-after": "120"}), GOOD)
    sleep = Recorder()
    # A deadline with room for the capped wait (a wait is also cut to the time left).
    ask(client(fake_llm, sleep, timeout_s=60.0), CallLedger())
    assert sleep.sleeps == [RETRY_AFTER_MAX_S]


def test_persistent_5xx_raises_transport_error_after_bounded_retries(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", Reply.error(503))
    sleep = Recorder()
    ledger = CallLedger()
    with pytest.raises(LLMTransportError, match="HTTP 503") as info:
        ask(client(fake_llm, sleep, transient_retries=4), ledger)
    assert info.value.status_code == 503
    assert fake_llm.calls("analyse") == 4
    assert len(sleep.sleeps) == 3
    assert all(0 <= s <= BACKOFF_MAX_S for s in sleep.sleeps)
    [call] = ledger.calls
    assert not call.ok and call.attempts == 4 and "503" in (call.error or "")


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_fail_at_once_without_retry(fake_llm: FakeLLM, status: int) -> None:
    fake_llm.script("analyse", Reply.error(status), GOOD)
    sleep = Recorder()
    ledger = CallLedger()
    with pytest.raises(LLMTransportError) as info:
        ask(client(fake_llm, sleep), ledger)
    assert info.value.status_code == status
    assert fake_llm.calls("analyse") == 1
    assert sleep.sleeps == []
    assert ledger.calls[0].attempts == 1


def test_a_hanging_server_ends_the_call_at_its_deadline_retries_included(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script("analyse", Reply.hanging())
    ledger = CallLedger()
    llm = client(fake_llm, timeout_s=0.3, transient_retries=3)  # built (SDK imported) untimed
    t0 = time.monotonic()
    with pytest.raises(LLMDeadlineExceeded, match=r"deadline: llm call for analyse exceeded 0.3 s"):
        ask(llm, ledger)
    # The timed-out attempt is not retried past the call's one deadline (issue 33).
    assert time.monotonic() - t0 < 0.3 + DEADLINE_MARGIN_S
    assert ledger.calls[0].attempts == 1
    assert not ledger.calls[0].ok


# What a deadline may overrun by: the helper thread's start and the caller's wake-up, with room
# for a loaded test machine. The dripping server below sends a byte every 1 s, so a client
# that waited for one more read (or retried) would overrun by a second or more.
DEADLINE_MARGIN_S = 0.5


def test_a_dripping_server_cannot_hold_a_call_past_its_deadline(fake_llm: FakeLLM) -> None:
    # One byte a second, a 2 s read timeout never fires; the 2 s total deadline must.
    fake_llm.script("analyse", Reply.dripping(GOOD, every_s=1.0))
    ledger = CallLedger()
    llm = client(fake_llm, timeout_s=2.0, transient_retries=3)
    t0 = time.monotonic()
    with pytest.raises(LLMDeadlineExceeded, match="deadline: llm call for analyse exceeded 2 s"):
        ask(llm, ledger)
    elapsed = time.monotonic() - t0
    assert 2.0 <= elapsed < 2.0 + DEADLINE_MARGIN_S
    assert isinstance(LLMDeadlineExceeded("x", step="s"), LLMTransportError)
    assert ledger.calls[0].error and ledger.calls[0].error.startswith("deadline:")


def test_the_abandoned_helper_drops_the_dripping_connection_at_its_next_byte(
    fake_llm: FakeLLM,
) -> None:
    # The caller has its failure at the deadline; the helper thread still blocked in the read
    # must not drip on for ever: it checks the deadline after every chunk and hangs up.
    fake_llm.script("analyse", Reply.dripping(GOOD, every_s=0.5))
    with pytest.raises(LLMDeadlineExceeded):
        ask(client(fake_llm, timeout_s=1.0), CallLedger())
    for helper in [t for t in threading.enumerate() if t.name == "llm-analyse"]:
        helper.join(timeout=0.5 + 2.0)  # the next byte, and room for a loaded machine
        assert not helper.is_alive(), "the helper is still reading"


def test_the_checks_deadline_ends_a_call_before_its_own(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", Reply.dripping(GOOD, every_s=1.0))
    llm = client(fake_llm, timeout_s=30.0)
    ledger = CallLedger(deadline=Deadline(1.0, "check"))
    t0 = time.monotonic()
    with pytest.raises(LLMDeadlineExceeded) as info:
        ask(llm, ledger)
    assert time.monotonic() - t0 < 1.0 + DEADLINE_MARGIN_S
    assert str(info.value).startswith("deadline: check exceeded 1 s during llm call for analyse")
    assert info.value.stage == "analyse"


def test_backoff_waits_are_cut_to_the_time_left(fake_llm: FakeLLM) -> None:
    # A 503 asking for a 10 s pause: the wait is cut to what is left of a 1 s deadline, and no
    # attempt starts after it.
    fake_llm.script("analyse", Reply.error(503, headers={"retry-after": "10"}))
    sleep = Recorder()
    with pytest.raises(LLMTransportError):
        ask(client(fake_llm, sleep, timeout_s=1.0, transient_retries=5), CallLedger())
    assert sleep.sleeps and all(s <= 1.0 for s in sleep.sleeps)


def test_a_dropped_connection_is_retried(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", Reply.dropped(), GOOD)
    ledger = CallLedger()
    assert ask(client(fake_llm), ledger).label == "yes"
    assert ledger.calls[0].attempts == 2


def test_a_non_completion_body_is_a_transport_error_not_an_invalid_answer(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script("analyse", Reply.body("<html>captive portal</html>"))
    ledger = CallLedger()
    with pytest.raises(LLMTransportError, match="other than a chat completion"):
        ask(client(fake_llm), ledger)
    assert fake_llm.calls("analyse") == 1
    assert not ledger.calls[0].ok


def test_a_prompt_over_the_backstop_is_refused_unsent_and_recorded(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", GOOD)
    llm = client(fake_llm, max_prompt_chars=1000)
    ledger = CallLedger()
    with pytest.raises(LLMPromptTooLong, match="prompt of 1,003 characters is over the 1,000"):
        llm.structured("analyse", system="sys", user="x" * 1000, schema=Answer, ledger=ledger)
    assert fake_llm.calls("analyse") == 0
    [call] = ledger.calls
    assert (call.ok, call.attempts) == (False, 0) and "not sent" in (call.error or "")
    # At the limit the prompt goes out.
    llm.structured("analyse", system="sys", user="x" * 997, schema=Answer, ledger=ledger)
    assert fake_llm.calls("analyse") == 1


def test_unconfigured_client_raises_not_configured() -> None:
    llm = LLMClient(LLMConfig())
    assert not llm.configured
    ledger = CallLedger()
    with pytest.raises(LLMNotConfigured):
        ask(llm, ledger)
    with pytest.raises(LLMNotConfigured):
        llm.text("draft", system="s", user="u", ledger=ledger)
    assert LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1")).configured is False


# --- free text ---


def test_text_returns_stripped_text_and_sends_no_response_format(fake_llm: FakeLLM) -> None:
    fake_llm.script("draft", Reply.text("  A reply.\n"))
    ledger = CallLedger()
    out = client(fake_llm).text("draft", system="s", user="u", ledger=ledger)
    assert out == "A reply."
    [req] = fake_llm.requests_for("draft")
    assert "response_format" not in req.body
    assert ledger.calls[0].step == "draft"


def test_empty_text_is_invalid_output(fake_llm: FakeLLM) -> None:
    fake_llm.script("draft", "")
    with pytest.raises(LLMInvalidOutput, match="empty"):
        client(fake_llm, invalid_retries=1).text("draft", system="s", user="u", ledger=CallLedger())
    assert fake_llm.calls("draft") == 2


# --- accounting ---


def test_tokens_and_cost_come_from_the_servers_usage(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        "analyse",
        Reply.text("nope", prompt_tokens=700, completion_tokens=10),
        Reply.json(GOOD, prompt_tokens=1000, completion_tokens=500),
    )
    llm = client(fake_llm, price_prompt_per_1k=0.01, price_completion_per_1k=0.02)
    ledger = CallLedger()
    ask(llm, ledger)
    ask(llm, ledger)  # the script's last reply repeats
    first, second = ledger.calls
    # The invalid attempt's tokens are paid for too.
    assert (first.prompt_tokens, first.completion_tokens) == (1700, 510)
    assert first.cost_usd == pytest.approx(0.017 + 0.0102)
    assert (second.prompt_tokens, second.completion_tokens) == (1000, 500)
    assert second.cost_usd == pytest.approx(0.02)
    assert ledger.count == 2
    assert ledger.prompt_tokens == 2700
    assert ledger.completion_tokens == 1010
    assert ledger.cost_usd == pytest.approx(0.0472)
    assert ledger.estimated_count == 0


def test_missing_usage_is_estimated_from_characters(fake_llm: FakeLLM) -> None:
    content = json.dumps(GOOD)
    fake_llm.script("analyse", Reply.text(content, omit_usage=True))
    ledger = CallLedger()
    ask(client(fake_llm, price_prompt_per_1k=1.0, price_completion_per_1k=1.0), ledger)
    [req] = fake_llm.requests
    [call] = ledger.calls
    assert call.prompt_tokens == message_chars(req.messages) // 4 > 0
    assert call.completion_tokens == len(content) // 4 > 0
    assert call.cost_usd == pytest.approx((call.prompt_tokens + call.completion_tokens) / 1000)
    assert ledger.estimated_count == 1


def test_latency_covers_the_time_the_server_took(fake_llm: FakeLLM) -> None:
    fake_llm.script("analyse", Reply.json(GOOD, delay_s=0.2))
    ledger = CallLedger()
    ask(client(fake_llm), ledger)
    assert 0.2 <= ledger.calls[0].latency_s < 2.0


def test_concurrent_calls_share_one_client_and_ledger(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        "analyse", lambda body: Reply.json(GOOD, prompt_tokens=len(body["messages"][1]["content"]))
    )
    fake_llm.set_delay(0.3)
    llm = client(fake_llm)
    ledger = CallLedger()
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            llm.structured("analyse", system="s", user="x" * i, schema=Answer, ledger=ledger)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # The calls ran side by side on the one client (a lock around it would serialise them).
    spans = sorted(
        (c.started_at.timestamp(), c.started_at.timestamp() + c.latency_s) for c in ledger.calls
    )
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))
    assert ledger.count == 8
    assert sorted(c.prompt_tokens for c in ledger.calls) == list(range(1, 9))
    assert ledger.prompt_tokens == sum(range(1, 9))


def test_ledger_adds_from_many_threads_lose_nothing() -> None:
    ledger = CallLedger()

    def work() -> None:
        for _ in range(500):
            ledger.add(LLMCall(step="s", model="m", ok=True, prompt_tokens=2, cost_usd=0.5))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ledger.count == 4000
    assert ledger.prompt_tokens == 8000
    assert ledger.cost_usd == pytest.approx(2000.0)


def test_an_injected_httpx_client_carries_the_requests() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": json.dumps(GOOD)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
            },
        )

    cfg = LLMConfig(base_url="http://llm.invalid/v1", model="m")
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        llm = LLMClient(cfg, http_client=http)
        ledger = CallLedger()
        assert ask(llm, ledger).label == "yes"
    assert seen[0]["model"] == "m"
    assert ledger.prompt_tokens == 3
