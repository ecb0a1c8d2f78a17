"""The review's title as a second wording of the fact-checked claim.

A fact-check states the claim it rates (`claimReviewed`) and has a title of its own, written
by the same fact-checker for readers ("Did Bernie Sanders Leave the Democratic Party?",
"Pizza Vending Machines"). Posts repeating a claim often word it as the title does rather
than as the claim is stated. On the CheckThat! 2022 train tweets (`bench/claim_checkthat.py`),
of the best matches scoring 0.60 or more by the claim, none of the 73 wrong ones had a MiniLM
cosine above 0.72 with the review's title, while 55 right ones left under the strong threshold
did.

So each of the best candidates of a query (the pool `pipeline.claims.index` also scores by
sentence pairs) is also scored as

    (1 - title_weight) × claim score + title_weight × title cosine

and keeps the better of the two scores (`with_title`), by which it is ranked. A match is
strong only when its claim alone reaches the weak threshold: a title is shorter and more
general than the claim ("Pizza Vending Machines"), so it can confirm a match the claim
supports and rank it, never make a strong one; a match by its title alone is a suggestion
for moderators ("title only"). The polarity rules still compare the post with the claim, not
with the title (a title is often a question, or opens with "No,").

The weight was chosen by the cross-validation of `bench/claim_checkthat.py` (train folds, the
gain in strong best matches and in MAP@5 against the fold spread) and checked on our own true
statements on a debunked claim's topic (`bench/claim_polarity.py`) and on fact-checks held
out of the index: the figures are beside `ClaimsConfig.title_weight` and in
docs/claim_matching.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from pipeline.relevance.lexical import clean_text

Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]


def with_title(claim_score: float, title_cosine: float, weight: float) -> float:
    """The better of the claim's score and its mix with the title's cosine."""
    mixed = (1.0 - weight) * claim_score + weight * max(0.0, min(1.0, title_cosine))
    return max(claim_score, mixed)


class TitleCache:
    """MiniLM vectors of review titles, kept between queries (the same fact-checks meet many
    posts). Bounded, oldest first out. Thread-safe."""

    def __init__(self, size: int = 20_000) -> None:
        self._size = size
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    def cosines(self, post: str, titles: Mapping[int, str], encode: Encode) -> dict[int, float]:
        """The cosine of `post` with each non-empty title, by the key it came with; the post
        and the titles not seen before are encoded in one batch by `encode`."""
        wanted = {key: title for key, title in titles.items() if title.strip()}
        if not wanted:
            return {}
        with self._lock:
            known = {t: self._vectors[t] for t in wanted.values() if t in self._vectors}
        todo = [t for t in dict.fromkeys(wanted.values()) if t not in known]
        vectors = encode([clean_text(post) or post] + [clean_text(t) or t for t in todo])
        known.update(zip(todo, vectors[1:], strict=True))
        with self._lock:
            self._vectors.update(zip(todo, vectors[1:], strict=True))
            for title in list(self._vectors)[: max(0, len(self._vectors) - self._size)]:
                del self._vectors[title]
        post_vector = vectors[0]
        return {key: float(known[title] @ post_vector) for key, title in wanted.items()}
