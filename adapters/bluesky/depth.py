"""Bounded nesting for JSON from the network.

A record's unknown fields are open (the lexicon lets a post carry any extra field, and an embed
`$type` we do not know is decoded as it comes), so a stranger can nest a value hundreds of
levels deep. The SDK parses bodies with pydantic_core's `from_json`, which refuses anything past
about 200 levels with a `ValueError`, and Python's `json` raises `RecursionError` past about a
thousand: either way the whole page would be lost, every poll. Real post records nest about ten
levels (record -> embed -> media -> images -> aspectRatio), and a `getPostThread` with
`parentHeight=1` a few more, so the limits below leave room for every real shape.
"""

from __future__ import annotations

import re
from typing import Any

# A body is cut to this many levels before it is parsed again (only a body `from_json` refused).
MAX_BODY_DEPTH = 64
# One notification nested deeper than this is not read (recorded, skipped).
MAX_ITEM_DEPTH = 32
TOO_DEEP = "[factnote: nested too deep, not read]"

# A JSON string (escapes included) or one bracket; a bracket inside a string is the string's.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def cap_depth(text: str, limit: int = MAX_BODY_DEPTH) -> tuple[str, int]:
    """`text` (JSON) with every array or object that opens deeper than `limit` levels replaced
    by the string `TOO_DEEP`, and how many were replaced. Linear, without recursion, so any
    depth is safe; text that is not JSON stays not JSON."""
    out: list[str] = []
    depth = 0
    kept_to = 0  # text[:kept_to] is decided (copied to `out` or dropped)
    cut_at: int | None = None  # the depth of the value being dropped
    cuts = 0
    for token in _TOKEN.finditer(text):
        kind = token.group()
        if kind in "[{":
            depth += 1
            if cut_at is None and depth > limit:
                out.append(text[kept_to : token.start()])
                out.append(f'"{TOO_DEEP}"')
                cut_at, cuts = depth, cuts + 1
        elif kind in "]}":
            if cut_at is not None and depth == cut_at:
                kept_to, cut_at = token.end(), None
            depth -= 1
    if cut_at is not None:  # unbalanced: keep it unparseable rather than half a value
        return text, 0
    out.append(text[kept_to:])
    return "".join(out), cuts


def nesting_depth(value: Any, stop_after: int) -> int:
    """How many levels of arrays and objects `value` nests (a scalar: 0), counted without
    recursion and no further than `stop_after` + 1. A `TOO_DEEP` marker counts as too deep."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            if node == TOO_DEEP:
                return stop_after + 1
            continue
        level += 1
        if level > stop_after:
            return level
        deepest = max(deepest, level)
        stack.extend((child, level) for child in children)
    return deepest
