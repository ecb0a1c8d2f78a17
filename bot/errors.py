"""User mistakes, said in one line each: which setting is wrong and how to fix it.

A missing credential, a mode spelled wrong, a database URL that does not parse or a server that
does not answer are the operator's to fix, not bugs: the CLI prints the lines `user_error`
returns (`factnote: error: ...`, exit status 2) instead of a traceback; `factnote --debug`
shows the traceback too. Anything not recognised here is left alone, so bugs still show in full.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from pipeline.redaction import redact

_SECRET_MARKERS = ("api_key", "password", "secret", "token")
CONFIG_HINT = "set it in the config file (--config) or the environment"


def env_name(loc: tuple[Any, ...]) -> str:
    """The FACTNOTE_ environment variable of a setting at `loc` (("runtime", "workers") ->
    FACTNOTE_RUNTIME__WORKERS); a location that is already a variable name is itself."""
    first = str(loc[0]) if loc else ""
    if first.isupper():  # pydantic reports a flat alias (FACTNOTE_WEB_SECURE_COOKIES) as is
        return first
    from bot import config

    flat: dict[tuple[str, ...], tuple[str, ...]] = getattr(config, "FLAT_ENV", {})
    names = flat.get(tuple(str(part) for part in loc))
    if names:
        return names[0]
    return "FACTNOTE_" + "__".join(str(part).upper() for part in loc if isinstance(part, str))


def setting_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def validation_lines(exc: Any) -> list[str]:
    """One line per error of a pydantic `ValidationError` on the settings."""
    lines: list[str] = []
    for error in exc.errors():
        loc = tuple(error.get("loc") or ())
        message = re.sub(r"^(Value|Assertion) error, ", "", str(error.get("msg", "invalid")))
        shown = error.get("input")
        secret = any(m in setting_name(loc).lower() for m in _SECRET_MARKERS)
        got = "" if secret or isinstance(shown, dict | list) else f" (got {shown!r})"
        got += _did_you_mean(error)
        if not loc:
            lines.append(f"invalid settings: {message}")
        elif str(loc[0]).isupper():
            lines.append(f"{loc[0]}: {message}{got}; fix the environment variable")
        else:
            lines.append(
                f"setting {setting_name(loc)} (env {env_name(loc)}): {message}{got}; {CONFIG_HINT}"
            )
    return lines


def _did_you_mean(error: Any) -> str:
    """For a value that is not one of a setting's choices, the closest choice."""
    if error.get("type") != "literal_error" or not isinstance(error.get("input"), str):
        return ""
    choices = re.findall(r"'([^']*)'", str((error.get("ctx") or {}).get("expected", "")))
    found = difflib.get_close_matches(error["input"], choices, n=1, cutoff=0.6)
    return f"; did you mean {found[0]!r}?" if found else ""


# The search errors that are the configuration's (pipeline/search/registry.py and the providers'
# constructors), not a provider failing at run time.
_SEARCH_SETUP = re.compile(r"is not set|must be an http|no search providers|unknown search")


def user_error(exc: BaseException) -> list[str] | None:
    """The lines that explain `exc` when it is a user's mistake, else None."""
    from pydantic import ValidationError

    from bot.config import ConfigError

    if isinstance(exc, ValidationError):
        # Only the settings' own models: bad data read by a command is that command's to say.
        settings_model = exc.title == "Settings" or exc.title.endswith("Config")
        return validation_lines(exc) if settings_model else None
    if isinstance(exc, ConfigError):
        return str(exc).splitlines()
    name = type(exc).__name__
    if name == "SearchError" and _SEARCH_SETUP.search(str(exc)):
        return [
            f"search: {exc}; set it in the environment, or remove the provider from "
            f"search.providers (env FACTNOTE_SEARCH__PROVIDERS)"
        ]
    return _database_error(exc)


def _database_error(exc: BaseException) -> list[str] | None:
    from storage.db import driver_error, is_url_error

    if is_url_error(exc) and _about_url(exc):
        return [
            f"setting database_url (env FACTNOTE_DATABASE_URL) is not a usable database URL: "
            f"{_first_line(exc)}; use e.g. sqlite:///data/factnote.db or "
            f"postgresql+psycopg://user@host/dbname"
        ]
    driver = driver_error(exc)
    if driver is not None and _cannot_connect(exc):
        return [
            f"cannot open the database (setting database_url, env FACTNOTE_DATABASE_URL): "
            f"{_first_line(driver)}; check that the server runs and the URL is right"
        ]
    return None


def _about_url(exc: BaseException) -> bool:
    text = str(exc)
    return "URL" in text or "dialects" in text or "plugin" in text


# What drivers say when the database cannot be reached or opened at all (psycopg, sqlite3).
_CONNECT_FAILURES = re.compile(
    r"connection (failed|refused|to server)|could not connect|unable to open database|"
    r"could not translate host|name or service not known|authentication failed|"
    r"database \S+ does not exist|timeout expired",
    re.IGNORECASE,
)


def _cannot_connect(exc: BaseException) -> bool:
    return bool(_CONNECT_FAILURES.search(str(exc)))


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    # SQLAlchemy quotes an unparsable URL whole: its password is masked with the rest.
    return redact(re.sub(r"^\([\w.]+\) ", "", text))
