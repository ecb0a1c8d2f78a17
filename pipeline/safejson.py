"""JSON written by strangers (imported fact-checks, data files, sidecars), parsed with limits.

`json.loads` recurses once per nesting level, so a file of 100,000 `[` raises `RecursionError`
from inside the parser (not a `ValueError`, so `except ValueError` handlers miss it), and a
5,000-digit number raises a bare `ValueError` that is not a `JSONDecodeError`. `loads` checks
the nesting depth before parsing, explicitly, and turns every way the text can be unreadable
into one `UntrustedJSONError` whose message says why without repeating the text.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate

MAX_DEPTH = 64  # Fact Check API JSON nests 4 levels, publishers' JSON-LD rarely over 10

# A JSON string (possibly unterminated: the parser reports that), and what is not a bracket.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class UntrustedJSONError(ValueError):
    """The text is not JSON this program will read (invalid, too deep, unrepresentable)."""


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in `text`, brackets inside strings not
    counted. Closing brackets with nothing open count down below zero; such text is not JSON
    and the parser rejects it at that bracket, before any nesting."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> object:
    """`json.loads(text)` for untrusted text: `UntrustedJSONError` when the text nests deeper
    than `max_depth` (checked before parsing) or cannot be parsed for any reason."""
    if nesting_depth(text) > max_depth:
        raise UntrustedJSONError(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UntrustedJSONError(f"invalid JSON: {exc}") from exc
    except (ValueError, RecursionError) as exc:  # e.g. an integer of over 4,300 digits
        raise UntrustedJSONError(f"unreadable JSON: {exc}") from exc
