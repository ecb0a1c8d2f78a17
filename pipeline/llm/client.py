"""The one door to a language model: structured (JSON-schema) and free-text chat calls.

Talks to any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp
server) through the `openai` SDK. Retries are owned here, in two separate budgets: transient
transport failures (timeouts, dropped connections, 429, 5xx) are retried with backoff by
tenacity, and answers that are empty, truncated, refused or do not validate against the pydantic
schema are re-asked a bounded number of times. Every call is accounted (attempts, tokens, cost,
latency, outcome) in a thread-safe `CallLedger`, whether it succeeded or not.
"""

from __future__ import annotations

import email.utils
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urlsplit

import httpx
import pydantic
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, stop_any
from tenacity.wait import wait_random_exponential

from pipeline.config import LLMConfig
from pipeline.failures import PipelineFailure
from pipeline.llm.output import (
    REASON_CHARS,
    Answer,
    InvalidAnswer,
    clip,
    model_parser,
    strict_json_schema,
    text_answer,
)
from pipeline.records import LLMCall, utcnow
from pipeline.redaction import redact
from pipeline.web.deadline import Deadline, bound_body, stop_at_deadline, within

if TYPE_CHECKING:
    # The SDK's import (its generated types) costs most of a second of start-up; a run with no
    # LLM configured never needs it, so it is imported where a client is built or an error read.
    import openai

log = logging.getLogger(__name__)

T = TypeVar("T", bound=pydantic.BaseModel)
R = TypeVar("R")

# Used when no base URL is configured but an API key is: the hosted OpenAI API. Passing it
# explicitly keeps the SDK from reading OPENAI_BASE_URL from the environment.
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the SDK refuses to run without one.
PLACEHOLDER_API_KEY = "not-needed"

BACKOFF_MULTIPLIER_S = 0.5
BACKOFF_MAX_S = 4.0
# A server may ask for a long pause; one decision must not stall on it for minutes.
RETRY_AFTER_MAX_S = 10.0
RAW_EXCERPT_CHARS = 500
# Every request names the pipeline step that made it, so a proxy, a log or a test double can
# tell the calls apart by a name that does not change when a schema class or prompt does.
STEP_HEADER = "X-Factnote-Step"

_REASK = (
    "Your previous answer was invalid: {reason}. "
    "Answer again with only a JSON object that matches the required schema, with no other text."
)
_REASK_TEXT = "Your previous answer was invalid: {reason}. Answer again."


class LLMError(PipelineFailure):
    """Base of every failure of an LLM call; `step` names the pipeline step that made it (and
    is the failure's `stage`)."""

    def __init__(self, message: str, *, step: str) -> None:
        super().__init__(message)
        self.step = step
        self.stage = step


class LLMNotConfigured(LLMError):
    """No endpoint or model is configured, so no call can be made."""


class LLMPromptTooLong(LLMError):
    """The prompt is over `LLMConfig.max_prompt_chars`, so it was not sent. The stages cut
    what strangers wrote to far less; this is the backstop for a stage that did not."""


class LLMTransportError(LLMError):
    """The endpoint could not be reached or refused the request (after bounded retries)."""

    def __init__(self, message: str, *, step: str, status_code: int | None = None) -> None:
        super().__init__(message, step=step)
        self.status_code = status_code


class LLMDeadlineExceeded(LLMTransportError):
    """The call's total deadline (`LLMConfig.timeout_s`, retries and re-asks included) or the
    check's passed before an answer came."""


class LLMInvalidOutput(LLMError):
    """The model kept answering with something unusable; `raw` is its last answer, truncated."""

    def __init__(self, message: str, *, step: str, raw: str = "") -> None:
        super().__init__(message, step=step)
        self.raw = raw


class CallLedger:
    """Per-request accounting of LLM calls. Thread-safe: steps call the LLM from workers."""

    def __init__(self, deadline: Deadline | None = None) -> None:
        self._lock = threading.Lock()
        self._calls: list[LLMCall] = []
        self._estimated = 0
        # The check's deadline: every call made for the request ends by it too.
        self.deadline = deadline

    def add(self, call: LLMCall, *, usage_estimated: bool = False) -> None:
        with self._lock:
            self._calls.append(call)
            if usage_estimated:
                self._estimated += 1

    @property
    def calls(self) -> list[LLMCall]:
        with self._lock:
            return list(self._calls)

    # The totals below read `calls`, a copy taken under the lock.

    @property
    def count(self) -> int:
        return len(self.calls)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.calls)

    @property
    def estimated_count(self) -> int:
        """Calls whose token counts were estimated because the server sent no usage."""
        with self._lock:
            return self._estimated


def _text_chars(content: object) -> int:
    """Characters of a message's text (an image part counts nothing: its tokens are the
    server's to report)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(str(p.get("text", ""))) for p in content if isinstance(p, dict))
    return 0


# --- transient-error policy ---------------------------------------------------------------


def _is_transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return False


def retry_after_s(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms` or `retry-after`), if it did."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


# --- the client ---------------------------------------------------------------------------


@dataclass
class _Tally:
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False


class LLMClient:
    """Structured and free-text calls with bounded retries and per-call accounting."""

    def __init__(
        self,
        cfg: LLMConfig,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._cfg = cfg
        self._sleep = sleep
        self._backoff = wait_random_exponential(multiplier=BACKOFF_MULTIPLIER_S, max=BACKOFF_MAX_S)
        self._client: openai.OpenAI | None = None
        # What an error text must never carry: the key (a 401 body may echo it) and the base
        # URL's credentials, alone or in the URL (`pipeline.redaction`).
        base = urlsplit(cfg.base_url or "")
        self._secrets = [
            s for s in (cfg.api_key.get_secret_value() if cfg.api_key else "", base.password) if s
        ]
        if cfg.configured:
            import openai

            api_key = cfg.api_key.get_secret_value() if cfg.api_key else PLACEHOLDER_API_KEY
            # One SDK client per LLMClient: it pools connections and is safe to share.
            self._client = openai.OpenAI(
                base_url=cfg.base_url or OPENAI_DEFAULT_BASE_URL,
                api_key=api_key,
                timeout=cfg.timeout_s,
                max_retries=0,  # tenacity owns retries
                # The SDK accepts a (legacy) httpx.Client besides its own httpx2 one.
                http_client=cast(Any, http_client),
            )

    @property
    def configured(self) -> bool:
        return self._cfg.configured

    def _safe(self, text: str) -> str:
        """`text` (an SDK error) without the key or the base URL's credentials."""
        return redact(text, self._secrets)

    @property
    def model(self) -> str:
        return self._cfg.model or ""

    def structured(
        self,
        step: str,
        *,
        system: str,
        user: str,
        schema: type[T],
        ledger: CallLedger,
        max_tokens: int | None = None,
        images: Sequence[str] = (),
    ) -> T:
        """Ask for a JSON object matching `schema` and return it validated. `images` are
        image URLs (or `data:` URLs) sent with the user message to a vision-capable model.

        Raises `LLMNotConfigured`, `LLMTransportError` or `LLMInvalidOutput`.
        """
        response_format = {
            "type": "json_schema",
            "json_schema": {
                "name": schema.__name__,
                "schema": strict_json_schema(schema),
                "strict": True,
            },
        }
        return self._call(
            step,
            system=system,
            user=user,
            response_format=response_format,
            parse=model_parser(schema),
            reask=_REASK,
            ledger=ledger,
            max_tokens=max_tokens,
            images=images,
        )

    def text(
        self,
        step: str,
        *,
        system: str,
        user: str,
        ledger: CallLedger,
        max_tokens: int | None = None,
    ) -> str:
        """Ask for free text; an empty, truncated or refused answer is `LLMInvalidOutput`."""
        return self._call(
            step,
            system=system,
            user=user,
            response_format=None,
            parse=text_answer,
            reask=_REASK_TEXT,
            ledger=ledger,
            max_tokens=max_tokens,
        )

    def _call(
        self,
        step: str,
        *,
        system: str,
        user: str,
        response_format: dict[str, Any] | None,
        parse: Callable[[Answer], R],
        reask: str,
        ledger: CallLedger,
        max_tokens: int | None,
        images: Sequence[str] = (),
    ) -> R:
        if self._client is None:
            raise LLMNotConfigured(
                f"{step}: no LLM endpoint/model configured (set llm.model and llm.base_url)",
                step=step,
            )
        base: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": _user_content(user, images)},
        ]
        tally = _Tally()
        started_at = utcnow()
        t0 = time.monotonic()

        def record(error: str | None) -> None:
            error = redact(error, self._secrets) if error else error
            ledger.add(
                LLMCall(
                    step=step,
                    model=self.model,
                    ok=error is None,
                    attempts=tally.attempts,
                    prompt_tokens=tally.prompt_tokens,
                    completion_tokens=tally.completion_tokens,
                    latency_s=time.monotonic() - t0,
                    cost_usd=self._cost(tally),
                    error=error,
                    started_at=started_at,
                ),
                usage_estimated=tally.estimated,
            )

        size = len(system) + len(user)
        if size > self._cfg.max_prompt_chars:
            refused = LLMPromptTooLong(
                f"{step}: prompt of {size:,} characters is over the "
                f"{self._cfg.max_prompt_chars:,} allowed (llm.max_prompt_chars); not sent",
                step=step,
            )
            record(str(refused))  # in the trace as a call of no attempts
            raise refused
        # One deadline for the whole call: every attempt, backoff wait and re-ask shares it.
        deadline = Deadline(self._cfg.timeout_s, f"llm call for {step}").sooner(ledger.deadline)
        try:
            result = within(
                lambda: self._ask(
                    step,
                    base=base,
                    response_format=response_format,
                    parse=parse,
                    reask=reask,
                    max_tokens=max_tokens or self._cfg.max_output_tokens,
                    tally=tally,
                    deadline=deadline,
                ),
                deadline,
                lambda: _deadline_error(step, deadline, tally),
                name=f"llm-{step}",
            )
        except LLMError as err:
            record(str(err))
            raise
        except Exception as err:
            record(f"{type(err).__name__}: {err}")
            raise
        record(None)
        return result

    def _ask(
        self,
        step: str,
        *,
        base: list[dict[str, Any]],
        response_format: dict[str, Any] | None,
        parse: Callable[[Answer], R],
        reask: str,
        max_tokens: int,
        tally: _Tally,
        deadline: Deadline,
    ) -> R:
        answers = 1 + max(0, self._cfg.invalid_retries)
        messages = base
        last: InvalidAnswer | None = None
        for _ in range(answers):
            answer = self._complete(step, messages, response_format, max_tokens, tally, deadline)
            try:
                return parse(answer)
            except InvalidAnswer as invalid:
                last = invalid
                log.info("%s: invalid LLM answer, re-asking: %s", step, invalid.reason)
                # Only the reason is sent back, never the earlier answer: a truncated or garbage
                # answer would just waste the context window.
                messages = [*base, {"role": "user", "content": reask.format(reason=invalid.reason)}]
        assert last is not None
        raw = clip(last.raw, RAW_EXCERPT_CHARS)
        raise LLMInvalidOutput(
            f"{step}: invalid LLM output after {answers} answer(s): {last.reason}; "
            f"last answer: {clip(last.raw, 200)!r}",
            step=step,
            raw=raw,
        )

    def _complete(
        self,
        step: str,
        messages: list[dict[str, Any]],
        response_format: dict[str, Any] | None,
        max_tokens: int,
        tally: _Tally,
        deadline: Deadline,
    ) -> Answer:
        assert self._client is not None
        client = self._client
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self._cfg.temperature,
            "max_tokens": max_tokens,
            "extra_headers": {STEP_HEADER: step},
        }
        if response_format is not None:
            kwargs["response_format"] = response_format
        import openai  # already loaded: a client exists

        def once() -> Any:
            if deadline.expired():
                raise _deadline_error(step, deadline, tally)
            tally.attempts += 1
            # Each attempt's network timeouts are the time left of the call's deadline, and
            # the body is read with the deadline checked after every chunk: once the caller
            # has stopped waiting, this helper drops the connection at the next byte.
            with client.chat.completions.with_streaming_response.create(
                **kwargs, timeout=deadline.timeout()
            ) as response:
                bound_body(
                    response.http_response, deadline, lambda: _deadline_error(step, deadline, tally)
                )
                return response.parse()

        try:
            completion = self._retrying(step, deadline)(once)
        except openai.APIStatusError as err:
            raise LLMTransportError(
                f"{step}: LLM endpoint answered HTTP {err.status_code} "
                f"after {tally.attempts} attempt(s): {clip(self._safe(err.message), REASON_CHARS)}",
                step=step,
                status_code=err.status_code,
            ) from err
        except openai.APITimeoutError as err:
            if deadline.expired():
                raise _deadline_error(step, deadline, tally) from err
            raise LLMTransportError(
                f"{step}: LLM request timed out after {self._cfg.timeout_s:g}s "
                f"({tally.attempts} attempt(s))",
                step=step,
            ) from err
        except openai.OpenAIError as err:
            raise LLMTransportError(
                f"{step}: LLM request failed after {tally.attempts} attempt(s): "
                f"{type(err).__name__}: {clip(self._safe(str(err)), REASON_CHARS)}",
                step=step,
            ) from err
        if not isinstance(getattr(completion, "choices", None), list):
            # A proxy login page or a non-chat endpoint: a transport fault, not a bad answer.
            raise LLMTransportError(
                f"{step}: LLM endpoint returned something other than a chat completion: "
                f"{clip(str(completion), 200)!r}",
                step=step,
            )
        return self._read(completion, messages, tally)

    def _retrying(self, step: str, deadline: Deadline) -> Retrying:
        """Transient errors are tried again while attempts and the call's deadline last; a
        backoff wait is cut to the time left."""
        return Retrying(
            stop=stop_any(
                stop_after_attempt(max(1, self._cfg.transient_retries)),
                stop_at_deadline(deadline),
            ),
            wait=lambda state: min(self._wait(state), deadline.remaining()),
            retry=retry_if_exception(_is_transient),
            sleep=self._sleep,
            before_sleep=lambda state: log.info(
                "%s: transient LLM error, retrying: %s",
                step,
                state.outcome.exception() if state.outcome else None,
            ),
            reraise=True,
        )

    def _read(self, completion: Any, messages: list[dict[str, Any]], tally: _Tally) -> Answer:
        choices = completion.choices
        if choices:
            message = choices[0].message
            content = message.content or ""
            refusal = getattr(message, "refusal", None)
            finish_reason = choices[0].finish_reason
        else:
            content, refusal, finish_reason = "", None, None
        usage = getattr(completion, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        # Some local servers send no usage; chars/4 keeps cost and budget tracking meaningful.
        if prompt is None:
            prompt = sum(_text_chars(m["content"]) for m in messages) // 4
            tally.estimated = True
        if completion_tokens is None:
            completion_tokens = len(content) // 4
            tally.estimated = True
        tally.prompt_tokens += int(prompt)
        tally.completion_tokens += int(completion_tokens)
        return Answer(content=content, finish_reason=finish_reason, refusal=refusal)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hinted = retry_after_s(exc)
        if hinted is not None:
            return min(hinted, RETRY_AFTER_MAX_S)
        return float(self._backoff(state))

    def _cost(self, tally: _Tally) -> float:
        return (
            tally.prompt_tokens * self._cfg.price_prompt_per_1k
            + tally.completion_tokens * self._cfg.price_completion_per_1k
        ) / 1000.0


def _deadline_error(step: str, deadline: Deadline, tally: _Tally) -> LLMDeadlineExceeded:
    return LLMDeadlineExceeded(
        f"{deadline.message(f'llm call for {step}')} ({tally.attempts} attempt(s))", step=step
    )


def _user_content(user: str, images: Sequence[str]) -> str | list[dict[str, Any]]:
    """The user message: plain text, or text plus the images as data URLs."""
    if not images:
        return user
    return [
        {"type": "text", "text": user},
        # detail "low": a 512 px view at a fixed 85 tokens, enough to read a meme.
        *({"type": "image_url", "image_url": {"url": url, "detail": "low"}} for url in images),
    ]
