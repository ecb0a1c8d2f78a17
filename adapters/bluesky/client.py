"""The connection to Bluesky: credentials, the session, one `call` per XRPC request, budgets.

- Session. createSession is limited to 30 per 5 minutes and 300 per day per account, so the
  client logs in lazily, reuses the session string stored at `session_path` (written atomically,
  mode 0600, on every create/refresh through `on_session_change`), and logs in with the app
  password only when there is no usable stored session, or once per call when the server rejects
  the session (counted in `relogins`).
- Login. After createSession refuses the credentials, the client stops logging in
  (`login_halted`) and raises `AccessDenied` without calling the server until the process
  restarts with new settings: createSession allows 30 per 5 minutes and 300 a day.
- Budgets. The `ratelimit-*` headers of every response are captured by an httpx response hook on
  the client's transport; `budgets()` lists the last ones seen per endpoint (empty until a call
  has been made, or when the client's transport is not an httpx client).
- Bodies. A JSON body that is not valid UTF-8, escapes a lone surrogate or nests too deep is
  repaired by the same hook (`repair_json`): the SDK's parser would refuse it whole, every poll.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
from atproto import Client, Request, Session, SessionEvent
from atproto_core.exceptions import AtProtocolError
from pydantic_core import from_json

from adapters.base import AccessDenied, RateBudget, storable
from adapters.bluesky.depth import MAX_BODY_DEPTH, cap_depth
from adapters.bluesky.errors import int_or_none, is_auth_failure, login_refused, translate

_log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_PDS = "https://bsky.social"
HTTP_TIMEOUT_S = 20.0
PAGE_LIMIT = 100  # items asked for per page of any listing


@dataclass(frozen=True)
class BlueskyCredentials:
    """The bot's account (from `bot.config`'s `[bluesky]` section, which reads it from the
    environment). The app password is kept out of `repr`."""

    handle: str
    app_password: str = field(repr=False)
    pds: str = DEFAULT_PDS


class BlueskyClient:
    """An `atproto.Client` (`sdk`) with the session kept, every call's failure typed, and the
    rate budgets it has seen."""

    def __init__(
        self, creds: BlueskyCredentials, *, session_path: str | Path, client: Client | None = None
    ) -> None:
        self._creds = creds
        self._login_halted: str | None = None
        self._session_path = Path(session_path)
        self.sdk = (
            client
            if client is not None
            else Client(base_url=creds.pds, request=Request(timeout=HTTP_TIMEOUT_S))
        )
        self._me: Session | None = None
        self._budgets: dict[str, RateBudget] = {}
        self.password_logins = 0  # createSession calls made by this client
        self.relogins = 0  # of those, the ones forced by a rejected session
        self.sdk.on_session_change(self._on_session_change)
        self._install_rate_hook()

    @property
    def login_halted(self) -> str | None:
        """Why logging in has stopped (credentials refused), or None while it may log in."""
        return self._login_halted

    def budgets(self) -> list[RateBudget]:
        return [self._budgets[k] for k in sorted(self._budgets)]

    def ensure_login(self) -> Session:
        if self._me is not None:
            return self._me
        stored = self._read_session()
        if stored is not None:
            try:
                self.sdk.login(session_string=stored, fetch_bsky_profile=False)
            except (AtProtocolError, ValueError) as exc:
                _log.warning("stored Bluesky session unusable (%s)", type(exc).__name__)
            else:
                self._me = Session.decode(self.sdk.export_session_string())
                return self._me
        return self._password_login()

    def call(self, endpoint: str, fn: Callable[[], T], *, posting: bool = False) -> T:
        self.ensure_login()
        try:
            return fn()
        except AtProtocolError as exc:
            if not is_auth_failure(exc):
                raise translate(exc, endpoint, posting=posting) from exc
        _log.info("Bluesky rejected the session at %s; logging in with the app password", endpoint)
        self.relogins += 1
        self._me = None
        self._password_login()
        try:
            return fn()
        except AtProtocolError as exc:
            raise translate(exc, endpoint, posting=posting) from exc

    # ----------------------------------------------------------------- session

    def _read_session(self) -> str | None:
        try:
            text = self._session_path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        try:
            session = Session.decode(text)
            # The client refuses a token without an expiry at its first call: check it now.
            usable = session.access_jwt_payload.exp is not None
        except (ValueError, AtProtocolError):
            usable = False
        if not usable:
            _log.warning("stored Bluesky session at %s is malformed", self._session_path)
            return None
        wanted = self._creds.handle.lower()
        if wanted not in (session.handle.lower(), session.did.lower()):
            _log.warning("stored Bluesky session belongs to another account; ignoring it")
            return None
        return text

    def _password_login(self) -> Session:
        if self._login_halted is not None:
            raise AccessDenied(
                f"Bluesky: not logging in again after {self._login_halted}; fix "
                "FACTNOTE_BLUESKY_HANDLE / FACTNOTE_BLUESKY_APP_PASSWORD and restart",
                status=401,
            )
        # createSession belongs to the configured entryway, whatever PDS the old session named.
        self.sdk.update_base_url(self._creds.pds)
        self.password_logins += 1
        try:
            self.sdk.login(self._creds.handle, self._creds.app_password, fetch_bsky_profile=False)
        except AtProtocolError as exc:
            error = translate(exc, "createSession", posting=False)
            if not login_refused(exc):
                raise error from exc
            # Each further try would spend createSession's 30-per-5-minutes / 300-a-day limit
            # on credentials that cannot work: stop until the settings change.
            self._login_halted = f"the login was refused ({error})"
            _log.error("Bluesky login refused; no more logins until restart: %s", error)
            raise AccessDenied(
                f"Bluesky: {self._login_halted}; fix FACTNOTE_BLUESKY_HANDLE / "
                "FACTNOTE_BLUESKY_APP_PASSWORD and restart",
                status=error.status,
            ) from exc
        self._me = Session.decode(self.sdk.export_session_string())
        return self._me

    def _on_session_change(self, event: SessionEvent, session: Session) -> None:
        if event in (SessionEvent.CREATE, SessionEvent.REFRESH):
            _write_private(self._session_path, session.export())
            self._me = session

    # ----------------------------------------------------------------- rate budgets

    def _install_rate_hook(self) -> None:
        # atproto exposes no hook of its own; its Request wraps a plain httpx.Client.
        http = getattr(self.sdk.request, "_client", None)
        if isinstance(http, httpx.Client):
            hooks = http.event_hooks
            hooks["response"] = [*hooks.get("response", []), self._observe_response, repair_json]
            http.event_hooks = hooks
        else:
            _log.info("Bluesky client transport is not httpx: budgets() will stay empty")

    def _observe_response(self, response: httpx.Response) -> None:
        headers = response.headers
        if not any(h in headers for h in ("ratelimit-limit", "ratelimit-remaining")):
            return
        endpoint = response.request.url.path.rsplit("/", 1)[-1]
        reset = int_or_none(headers.get("ratelimit-reset"))
        self._budgets[endpoint] = RateBudget(
            endpoint=endpoint,
            limit=int_or_none(headers.get("ratelimit-limit")),
            remaining=int_or_none(headers.get("ratelimit-remaining")),
            reset_at=datetime.fromtimestamp(reset, tz=UTC) if reset is not None else None,
        )


def repair_json(response: httpx.Response) -> None:
    """Make a JSON body that is not valid UTF-8, that escapes a lone surrogate ("\\ud83d",
    half an emoji), or that nests deeper than the parser allows, readable: the SDK parses
    bodies with pydantic_core, which refuses all three and would fail the whole call, every
    poll. Invalid bytes become U+FFFD and lone surrogates backslash escapes (`storable`); values
    nested deeper than `MAX_BODY_DEPTH` become a `TOO_DEEP` marker (the item holding one is then
    read as unreadable, not the page); a body that parses as it is is left alone."""
    if "application/json" not in response.headers.get("content-type", "").lower():
        return
    body = response.read()
    try:
        from_json(body)
        return
    except ValueError:
        pass
    text, cuts = cap_depth(body.decode("utf-8", "replace"))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return  # not JSON at all: the SDK reports it as it is
    if cuts:
        _log.warning(
            "Bluesky %s: %d value(s) nested deeper than %d levels were not read",
            response.url.path,
            cuts,
            MAX_BODY_DEPTH,
        )
    else:
        _log.warning("Bluesky %s: body had invalid text; read with it escaped", response.url.path)
    # httpx has no public way to replace a read body; the SDK reads `response.content` next.
    response._content = json.dumps(_storable_json(data)).encode()


def _storable_json(value: Any) -> Any:
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, list):
        return [_storable_json(v) for v in value]
    if isinstance(value, dict):
        return {storable(str(k)): _storable_json(v) for k, v in value.items()}
    return value


def _write_private(path: Path, text: str) -> None:
    """Write atomically with mode 0600: a session string is a credential."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
