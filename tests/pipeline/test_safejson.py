"""JSON from strangers: an explicit nesting limit, and one error type for every way it fails."""

from __future__ import annotations

import pytest

from pipeline.safejson import MAX_DEPTH, UntrustedJSONError, loads, nesting_depth


def test_depth_counts_arrays_and_objects_but_not_brackets_inside_strings() -> None:
    assert nesting_depth('{"a": [1, {"b": []}]}') == 4
    assert nesting_depth('{"a": "[[[{{{", "b": "\\\\\\"[["}') == 1
    assert nesting_depth("42") == 0


def test_nesting_at_the_limit_parses_and_one_deeper_is_refused_before_parsing() -> None:
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(UntrustedJSONError, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    # Far past the interpreter's recursion limit: still the same error, no RecursionError.
    with pytest.raises(UntrustedJSONError):
        loads('{"a":' * 200_000)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", "invalid JSON"),
        ("[" + "9" * 5000 + "]", "unreadable JSON"),
        ('"unterminated', "invalid JSON"),
    ],
)
def test_every_failure_is_one_error_that_is_a_value_error(text: str, why: str) -> None:
    with pytest.raises(UntrustedJSONError, match=why) as caught:
        loads(text)
    assert isinstance(caught.value, ValueError)
