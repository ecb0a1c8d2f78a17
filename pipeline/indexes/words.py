"""The words a free-text query searches the database's full-text index for
(`storage.indexes.fulltext` turns them into each dialect's query)."""

from __future__ import annotations

import re

from pipeline.relevance.lexical import ENGLISH_STOPWORDS

MAX_QUERY_TERMS = 32

_TERM = re.compile(r"\w+", re.UNICODE)


def query_words(query: str) -> list[str]:
    """The words a free-text query searches for, lower-case, first occurrence first.

    Function words match nearly every document; OR-ing them into a query would turn any query
    into "everything", so they are dropped unless nothing else is left."""
    words = [t.lower() for t in _TERM.findall(query)]
    content = [t for t in words if t not in ENGLISH_STOPWORDS and (len(t) > 1 or t.isdigit())]
    return list(dict.fromkeys(content or words))[:MAX_QUERY_TERMS]
