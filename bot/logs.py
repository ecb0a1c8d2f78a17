"""What the running bot says about its work: logging set-up, one line per request transition,
and a scheduler that only speaks when it has something to say.

`setup_logging` installs one handler on stderr, as text for people or as JSON lines for log
aggregators (stable keys: `ts`, `level`, `logger`, `message`, plus the fields of the event).
Every line passes through `redact` (`pipeline.redaction`), which replaces the values of secret
environment variables (API keys, passwords, tokens), in every escaped form, and the userinfo of
every URL (a database password, an LLM base URL's credentials) with `***`: a library that puts
a key in an error message or a URL in a request line must not put it in the logs.

`log_transition` is the one way a request's state change is logged, so that `grep request=42`
(or a query on `request_id` in JSON) shows a request's whole life.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Literal, TextIO

from pipeline.redaction import MIN_SECRET_CHARS, redact

LogFormat = Literal["text", "json"]
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

TRANSITIONS = "factnote.requests"  # the logger of request transitions
_FIELDS = "factnote_fields"  # the LogRecord attribute carrying an event's structured fields
_SECRET_NAME_MARKERS = ("KEY", "PASSWORD", "SECRET", "TOKEN")
_REASON_CHARS = 300  # a reason is cut here in text lines (JSON keeps 1000)

log = logging.getLogger(TRANSITIONS)


# --- secrets ----------------------------------------------------------------------------------


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """The values that must never reach a log line: every FACTNOTE_*/OPENAI_* environment
    variable named like a secret, and the password of the configured database URL."""
    if env is None:
        from bot.config import environment  # the one reader of the environment

        env = environment()
    found = {
        value
        for name, value in env.items()
        if name.startswith(("FACTNOTE_", "OPENAI_"))
        and any(marker in name.upper() for marker in _SECRET_NAME_MARKERS)
        and len(value) >= MIN_SECRET_CHARS
    }
    url = env.get("FACTNOTE_DATABASE_URL", "")
    password = _url_password(url)
    if password and len(password) >= MIN_SECRET_CHARS:
        found.add(password)
    # Longest first, so that a secret containing another is replaced whole.
    return sorted(found, key=len, reverse=True)


def _url_password(url: str) -> str | None:
    if "@" not in url or "://" not in url:
        return None
    credentials = url.split("://", 1)[1].split("@", 1)[0]
    return credentials.split(":", 1)[1] if ":" in credentials else None


# The secrets `setup_logging` found, for `log_transition` to mask before it escapes a reason.
_active_secrets: list[str] = []


def _redact_fields(value: Any, secrets: list[str]) -> Any:
    """An event's fields with every string redacted, before JSON escapes them."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: _redact_fields(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_fields(item, secrets) for item in value]
    return value


# --- formatters -------------------------------------------------------------------------------


class TextFormatter(logging.Formatter):
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.secrets = list(secrets)

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secrets)


class JsonFormatter(logging.Formatter):
    """One JSON object per line. Keys are stable: `ts` (ISO 8601, UTC), `level`, `logger`,
    `message`, then the event's own fields (`event`, `request_id`, `platform`, `state`...),
    and `exception` (the traceback text) when there is one."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = list(secrets)

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage(), self.secrets),
        }
        fields = getattr(record, _FIELDS, None)
        if isinstance(fields, dict):
            for key, value in fields.items():
                payload.setdefault(key, value)
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        # Redacted before JSON escapes a secret's quote or backslash, and after, for the escaped
        # forms a message carried already.
        payload = _redact_fields(payload, self.secrets)
        return redact(json.dumps(payload, ensure_ascii=False, default=str), self.secrets)


# --- set-up -----------------------------------------------------------------------------------


class _OurHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is when a line is logged (rich's progress display and
    test runners swap it); marks the handler `setup_logging` installed, so that a second call
    replaces only it."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def setup_logging(level: str = "warning", fmt: LogFormat = "text") -> None:
    """One handler on stderr at `level`, in `fmt`; APScheduler's routine lines kept below it."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r} (use one of {', '.join(LOG_LEVELS)})")
    secrets = secret_values()
    _active_secrets[:] = secrets
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _OurHandler)]:
        root.removeHandler(handler)
    handler = _OurHandler()
    handler.setFormatter(JsonFormatter(secrets) if fmt == "json" else TextFormatter(secrets))
    root.addHandler(handler)
    root.setLevel(numeric)
    quiet_scheduler_logs(debug=numeric <= logging.DEBUG)


# --- request transitions ----------------------------------------------------------------------


def _value(state: str | Enum | None) -> str | None:
    return None if state is None else str(state.value if isinstance(state, Enum) else state)


def log_transition(
    request_id: int,
    platform: str,
    state: str | Enum,
    *,
    previous: str | Enum | None = None,
    verdict: str | Enum | None = None,
    reason: str | None = None,
    timings: Mapping[str, float] | None = None,
    error: str | None = None,
    actor: str | None = None,
    level: int = logging.INFO,
) -> None:
    """One line for one request changing state: `request=12 platform=x queued -> dry_run
    by=worker:host:42 verdict=false reason="..." total=3.21s`. In JSON: `event` "transition" and
    the fields `request_id`, `platform`, `previous`, `state`, `actor`, `verdict`, `reason`,
    `error`, `timings`."""
    new, old, said = _value(state), _value(previous), _value(verdict)
    # Masked before `json.dumps` escapes them (the formatters mask escaped forms too).
    reason = redact(reason, _active_secrets) if reason else reason
    error = redact(error, _active_secrets) if error else error
    rounded = {k: round(float(v), 3) for k, v in (timings or {}).items()}
    fields: dict[str, Any] = {
        "event": "transition",
        "request_id": request_id,
        "platform": platform,
        "previous": old,
        "state": new,
        "actor": actor,
        "verdict": said,
        "reason": (reason or "")[:1000] or None,
        "error": (error or "")[:1000] or None,
        "timings": rounded or None,
    }
    parts = [f"request={request_id}", f"platform={platform}"]
    parts.append(f"{old} -> {new}" if old else f"-> {new}")
    if actor:
        parts.append(f"by={actor}")
    if said:
        parts.append(f"verdict={said}")
    if reason:
        parts.append(f"reason={json.dumps(_cut(reason), ensure_ascii=False)}")
    if error:
        parts.append(f"error={json.dumps(_cut(error), ensure_ascii=False)}")
    if "total" in rounded:
        parts.append(f"total={rounded['total']:.2f}s")
    log.log(level, "%s", " ".join(parts), extra={_FIELDS: fields})


def _cut(text: str) -> str:
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


# --- the scheduler ----------------------------------------------------------------------------


class SkippedRuns(logging.Filter):
    """APScheduler warns each time a job's next start comes while its previous run is still
    working ("maximum number of running instances reached"): with the queue drained every
    second, a long drain writes one warning a second, though nothing is wrong. This filter
    drops those records and says once a `window_s` per job, at INFO, what they meant."""

    def __init__(self, window_s: float = 60.0) -> None:
        super().__init__()
        self.window_s = window_s
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._since: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if "maximum number of running instances" not in str(record.msg):
            return True
        job = record.args[0] if isinstance(record.args, tuple) and record.args else None
        name = str(getattr(job, "id", None) or getattr(job, "name", None) or "a job")
        now = time.monotonic()
        with self._lock:
            self._counts[name] = self._counts.get(name, 0) + 1
            started = self._since.setdefault(name, now)
            if now - started < self.window_s:
                return False
            count = self._counts.pop(name)
            del self._since[name]
        logging.getLogger("bot.ops.service").info(
            "job %s was still running at %d of its scheduled starts in the last %.0f s; "
            "those starts were skipped (not an error: the previous run is still working)",
            name,
            count,
            now - started,
        )
        return False


_SKIPPED = SkippedRuns()


def quiet_scheduler_logs(*, debug: bool = False) -> None:
    """APScheduler's per-run lines ("Running job...", "executed successfully") only at DEBUG;
    its skipped-start warnings summarised by `SkippedRuns`. Safe to call again."""
    level = logging.DEBUG if debug else logging.WARNING
    logging.getLogger("apscheduler.executors").setLevel(level)
    scheduler = logging.getLogger("apscheduler.scheduler")
    scheduler.setLevel(level)
    if _SKIPPED not in scheduler.filters:
        scheduler.addFilter(_SKIPPED)
