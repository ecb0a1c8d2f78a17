"""Where X finds links in a text: twitter-text's extractor, the one the platform runs.

The reply formats weigh X text with it (`pipeline.reply.formats`) and the URL finder
(`pipeline.web.links`) widens what it finds; both read it here, the lower layer.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any


@functools.cache
def twitter_text_module() -> Any:
    """The twitter-text package, imported on first count: its import (an emoji table compiled
    into regular expressions, and pkg_resources) is a quarter of a second that a process which
    never measures an X reply, such as `factnote check` before its first guard, need not pay."""
    with warnings.catch_warnings():
        # twitter-text imports pkg_resources at import time; its deprecation warning is not ours.
        warnings.simplefilter("ignore", category=UserWarning)
        warnings.simplefilter("ignore", category=DeprecationWarning)
        import twitter_text
    return twitter_text


def x_url_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each URL X would link in `text` (twitter-text's extractor)."""
    spans = twitter_text_module().extract_urls_with_indices(text)
    return [(e["indices"][0], e["indices"][1]) for e in spans]
