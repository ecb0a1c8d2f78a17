"""What matching reads off a stored claim, kept by row id (`pipeline.claims.row_cache`)."""

from __future__ import annotations

from pipeline.claims.records import ClaimRecord
from pipeline.claims.row_cache import RowFactsCache, TermStore, claim_terms
from pipeline.config import CredibilityConfig
from pipeline.relevance.lexical import terms
from pipeline.sources.credibility import PublisherTable

PUBLISHERS = PublisherTable.from_config(CredibilityConfig(overrides={"junk.example": "excluded"}))


def claim(text: str, url: str = "https://snopes.com/a", **extra: str) -> ClaimRecord:
    return ClaimRecord(claim_text=text, review_url=url, **extra)


def test_claim_terms_are_the_lexical_terms() -> None:
    text = "Drinking hot lemon water cures cancer, doctors say"
    assert list(claim_terms(text)) == terms(text)


def test_row_facts_rate_the_publisher_and_guess_the_claims_language_once() -> None:
    cache = RowFactsCache(PUBLISHERS)
    german = claim("Heißes Zitronenwasser heilt Krebs, sagen die Ärzte in Berlin", language="en")
    assert cache.language(1, german) == "de"
    assert cache.language(2, claim("Lemon water cures cancer", language="es")) == "es"
    assert not cache.excluded(3, claim("x y z w", url="https://snopes.com/b"))
    assert cache.excluded(4, claim("x y z w", url="https://junk.example/b"))
    assert cache.excluded(5, claim("x y z w", publisher_site="junk.example"))
    assert len(cache) == 3


def test_a_row_id_given_to_another_record_gets_that_records_facts() -> None:
    cache = RowFactsCache(PUBLISHERS)
    assert not cache.excluded(7, claim("Lemon water cures cancer"))
    assert cache.excluded(7, claim("Lemon water cures cancer", publisher_site="junk.example"))
    assert cache.language(8, claim("Lemon water cures cancer", language="es")) == "es"
    assert cache.language(8, claim("Lemon water cures cancer", language="fr")) == "fr"


def test_the_facts_memo_starts_over_when_full() -> None:
    cache = RowFactsCache(PUBLISHERS, max_rows=2)
    for rowid in range(5):
        cache.excluded(rowid, claim(f"claim number {rowid}"))
    assert len(cache) <= 2


def test_the_term_store_stems_only_new_or_changed_rows_and_forgets_deleted_ones() -> None:
    store = TermStore()
    first = store.corpus([(1, "Vaccines cause autism"), (2, "The moon landing was faked")])
    assert first == [
        claim_terms("Vaccines cause autism"),
        claim_terms("The moon landing was faked"),
    ]
    kept = store.get(1, "Vaccines cause autism")
    again = store.corpus([(1, "Vaccines cause autism"), (3, "Bananas are radioactive")])
    assert again[0] is kept  # the same tuple: not stemmed again
    assert again[1] == claim_terms("Bananas are radioactive")
    # Row 2 is gone; an id reused for another claim is stemmed anew.
    assert store.corpus([(1, "Cats can see ghosts")]) == [claim_terms("Cats can see ghosts")]
    assert store.get(2, "The moon landing was faked") == claim_terms("The moon landing was faked")
