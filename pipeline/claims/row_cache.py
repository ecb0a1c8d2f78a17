"""What `ClaimIndex.match` reads off a stored claim besides its vectors, worked out once per row.

Every candidate of every query was rated by the publisher table (two lookups, each unwrapping
archive and redirect links), had its claim's language guessed (py3langid) and its words
stemmed: about 0.3 ms of CPU a candidate, some 30 ms of a query's 100 candidates, and under
cProfile more than the rest of `match` together (issue 29, item 6). None of it depends on the
query, so it is kept by row id for as long as the index is open, with a stamp of the record
it was worked out from.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pipeline.claims.multilingual import reliable_language
from pipeline.claims.records import ClaimRecord
from pipeline.claims.segments import SegmentPair
from pipeline.records import Tier
from pipeline.relevance.lexical import terms
from pipeline.sources.credibility import PublisherTable

# Rows remembered before the memo starts over: about 300 bytes each, so some 150 MB at most,
# and a 200,000-claim index's candidates fit with room to spare.
MAX_ROWS = 500_000
T = TypeVar("T")


def claim_terms(text: str) -> tuple[str, ...]:
    """`pipeline.relevance.lexical.terms` of a claim, each word stored once however many claims hold
    it."""
    return tuple(sys.intern(t) for t in terms(text))


def excluded_url(publishers: PublisherTable, url: str) -> bool:
    return publishers.lookup(url).tier is Tier.EXCLUDED


@dataclass(frozen=True)
class Scored:
    """A candidate `ClaimIndex.match` scored for a query, before its strength is decided."""

    rowid: int
    record: ClaimRecord
    score: float
    dense: float
    overlap: float
    cross: bool  # scored by the multilingual cosine: a fact-check in another language
    pair: SegmentPair | None  # the sentence pair that scored, when it beat the whole texts
    title: float | None = None  # cosine with the review's title, where it was scored
    by_claim: float | None = None  # the score before the title's part, where it had one


class RowFactsCache:
    """By row id: whether a record's publisher is rated EXCLUDED (its rating is ignored), and
    the language of the claim's own words when the guess is sure, else the record's. Each is
    worked out when first asked: every candidate's language shapes its score, the exclusion
    only matters to the matches returned. Thread-safe."""

    def __init__(self, publishers: PublisherTable, max_rows: int = MAX_ROWS) -> None:
        # A publisher's site recurs in all its records: rated once.
        self._excluded_url = functools.lru_cache(maxsize=4096)(
            functools.partial(excluded_url, publishers)
        )
        self._max_rows = max_rows
        self._excluded: dict[int, tuple[int, bool]] = {}  # row id -> (stamp, fact)
        self._languages: dict[int, tuple[int, str | None]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return max(len(self._excluded), len(self._languages))

    def excluded(self, rowid: int, record: ClaimRecord) -> bool:
        def work() -> bool:
            urls = (record.review_url, record.publisher_site)
            return any(url and self._excluded_url(url) for url in urls)

        return self._memo(self._excluded, rowid, record, work)

    def language(self, rowid: int, record: ClaimRecord) -> str | None:
        return self._memo(
            self._languages,
            rowid,
            record,
            lambda: reliable_language(record.claim_text) or record.language,
        )

    def _memo(
        self,
        table: dict[int, tuple[int, T]],
        rowid: int,
        record: ClaimRecord,
        work: Callable[[], T],
    ) -> T:
        # SQLite gives a new row the highest id plus one, so an id freed at the top of the
        # table comes back with another record: the entry holds what it was worked out from.
        stamp = hash((record.review_url, record.publisher_site, record.language, record.claim_text))
        found = table.get(rowid)
        if found is not None and found[0] == stamp:
            return found[1]
        fact = work()
        with self._lock:
            if len(table) >= self._max_rows:
                table.clear()
            table[rowid] = (stamp, fact)
        return fact


class TermStore:
    """`claim_terms` of stored claims by row id, for the BM25 index and the word overlap.
    Stemming every claim is most of building a BM25 index (minutes at 200,000 claims); kept
    here, a rebuild after an import stems only the rows that are new or changed (an id freed
    at the top of a SQLite table comes back with another claim). Thread-safe."""

    def __init__(self) -> None:
        self._terms: dict[int, tuple[int, tuple[str, ...]]] = {}  # id -> (hash of text, terms)
        self._lock = threading.Lock()

    def get(self, rowid: int, text: str) -> tuple[str, ...]:
        """The terms of row `rowid`, whose claim is `text`."""
        found = self._terms.get(rowid)
        return found[1] if found is not None and found[0] == hash(text) else claim_terms(text)

    def corpus(self, rows: Sequence[tuple[int, str]]) -> list[tuple[str, ...]]:
        """The terms of each (row id, claim text) in `rows` (the rows stored now), in order.
        Rows no longer stored are forgotten."""
        with self._lock:
            old, self._terms = self._terms, {}
            for rowid, text in rows:
                stamp = hash(text)
                found = old.get(rowid)
                kept = found if found is not None and found[0] == stamp else None
                self._terms[rowid] = kept or (stamp, claim_terms(text))
            return [terms for _, terms in self._terms.values()]
