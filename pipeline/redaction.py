"""The one redaction of secrets from text that is printed, logged or stored (issue 33, finding 3).

Two kinds of secret reach error texts and log lines: configured values (API keys, passwords,
tokens) that a server or library echoes back, and credentials written into a URL
(`postgresql+psycopg://postgres:pw@db/factnote`, an LLM base URL `https://user:key@proxy/v1`).
`redact` masks both: the userinfo of every URL in the text (the user name stays when a
password follows it, since it tells which account; a lone userinfo is itself the token), and
each given secret in every form a line may carry it in: as is, escaped for JSON (once or twice:
a JSON log line of a message that quotes a JSON string), as Python's `repr` writes it, and
percent-encoded. Escaping happens after a secret has been replaced wherever this module is used
first, so an escaped form is the second line of defence, not the only one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

import regex

MASK = "***"
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words
# scheme://userinfo@ : greedy up to the last "@" before the path, so a password containing
# "@" (unencoded, as people write it) is masked whole.
_USERINFO_RE = regex.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<info>[^\s/?#\"'<>]*)@")


def _mask_userinfo(match: regex.Match[str]) -> str:
    info = match.group("info")
    user, colon, _ = info.partition(":")
    shown = f"{user}:{MASK}" if colon and user else MASK
    return f"{match.group('scheme')}{shown}@"


def _json_escaped(text: str) -> set[str]:
    return {json.dumps(text, ensure_ascii=ascii_only)[1:-1] for ascii_only in (True, False)}


def secret_forms(secret: str) -> list[str]:
    """`secret` as a text may carry it: raw, JSON-escaped (once and twice), `repr`-escaped and
    percent-encoded; longest first, so that a form containing another is replaced whole."""
    forms = {secret, repr(secret)[1:-1], quote(secret, safe=""), quote_plus(secret)}
    once = set().union(*(_json_escaped(form) for form in forms))
    twice = set().union(*(_json_escaped(form) for form in once))
    return sorted(forms | once | twice, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every URL's userinfo masked and each of `secrets` (in every `secret_forms`)
    replaced by `MASK`. Secrets shorter than `MIN_SECRET_CHARS` are left: they would mask
    ordinary words."""
    text = _USERINFO_RE.sub(_mask_userinfo, text)
    forms: set[str] = set()
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_CHARS:
            forms.update(secret_forms(secret))
    for form in sorted(forms, key=len, reverse=True):
        if form in text:
            text = text.replace(form, MASK)
    return text


def shown_url(url: str | None) -> str:
    """A URL as it may be printed: its userinfo masked (`redact`)."""
    return redact(url or "")
