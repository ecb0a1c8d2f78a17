"""Does a post say what a fact-checked claim says, or something else that sounds the same?

Sentence embeddings and word overlap score "X is safe" and "X is not safe" almost alike (the
issue-14 measurement: 97-99% of negated or reversed claims matched strongly, a mean score drop
of 0.06). A strong match is used without a human, so before it may be strong the two claims
are compared by rule for the changes that reverse or replace what a claim says, and for a
post that repeats a claim only to dispute it:

* negation: the number of negation cues differs ("not", "never", "no longer", n't, "It is not
  true that", "false that", and the common cues of German, French, Spanish, Italian,
  Portuguese and Dutch); two negations do not cancel (a second one added to a claim that
  negates is another claim), wordings that deny nothing ("nothing more than", "if not the
  only", "not only", a sentence opening "Don't …") are no cues; a
  negated wording of the other text's positive word ("no longer" for "banned", "no country
  … more than" for "the largest", "no risk" for "safe") is read as that word;
* antonyms: one text uses one side of a curated pair (more/less, largest/smallest,
  increase/decrease, rise/fall, safe/dangerous, ...) and the other text only the other side,
  or a word and its negative prefix form (effective/ineffective, legal/illegal);
* numbers: the post states a quantity, percentage, year or month the claim does not have
  in place of one the claim has (digits with either separator, "2 million", number words), or
  counts time in another unit ("for months" against "for three seconds"); a post that leaves
  a number out, or adds one the claim has no counterpart for, is still the same claim;
* named entities: each text names someone or something the other does not (capitalised
  words not opening a sentence, acronyms, matched loosely so "Lebanese" finds "Lebanon");
* key predicates: one text asserts a predicate of `pipeline.claims.polarity.predicates`' table
  ("kills", "causes", "bans") and the other has no word for it: the same topic, another claim
  ("Lemon water helps you stay hydrated when you have the flu" against "... kills the flu"),
  or a near-verbatim copy puts one content word in place of another ("bacterial" for
  "viral"); left out for texts that hardly share words (a post in another language);
* dispute: the post calls what it repeats fake, a hoax, a myth, not true, or reports it as
  what others claim ("Fake news again: X"): it quotes the claim to reject it.

Any difference is a `Mismatch`; the caller demotes the match to a moderator suggestion and
records why. The rules favour precision of strong matches over recall: a paraphrase that
happens to trip one only loses its automatic use. Measured in `bench/claim_polarity.py`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from pipeline.claims.polarity import antonyms, names
from pipeline.claims.polarity.predicates import predicate_difference
from pipeline.post.platform_text import fold_quotes, strip_boilerplate
from pipeline.relevance.lexical import ENGLISH_STOPWORDS, stem, strip_links


class MismatchKind(StrEnum):
    NEGATION = "negation"
    ANTONYM = "antonym"
    NUMBER = "number"
    ENTITY = "entity"
    PREDICATE = "predicate"
    DISPUTE = "dispute"


ALL_KINDS = frozenset(MismatchKind)


@dataclass(frozen=True)
class Mismatch:
    kind: MismatchKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.detail}"


_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_SENTENCE_END_RE = re.compile(r"[.!?:;…]+[\"'”’)]*\s+|\n+")


def _fold(text: str) -> str:
    plain = strip_links(unicodedata.normalize("NFKC", text)).replace("#", " ").replace("_", " ")
    return " ".join(plain.split())


def _words(text: str) -> list[str]:
    return [w.casefold().replace("’", "'") for w in _WORD_RE.findall(text)]


def _family(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _family_order(words: str) -> list[str]:
    return words.split()


# --- negation ---------------------------------------------------------------------------------

# Single words that negate, in the languages the rating table covers. "ne" stands for French
# "ne … pas" so the pair counts once ("pas" is left out).
_NEGATION_WORDS = _family(
    """
    not no never nobody nothing none neither nor nowhere cannot
    nicht kein keine keinen keinem keiner keines nie niemals niemand nichts
    ne jamais aucun aucune
    nunca jamás ningún ninguna ninguno nadie nada tampoco
    non mai nessuno nessuna niente nulla
    não nem nenhum nenhuma ninguém
    niet geen nooit niemand
    """
)
# Phrases that deny what follows without a negation word ("It is false that ...", "... is a
# myth"). "no longer" and "it is not true that" already count through "no" and "not".
_NEGATION_PHRASES = (
    re.compile(
        r"\b(?:false|untrue|a myth|a hoax|fake news|wrong) that\b|\bfail(?:s|ed)? to\b"
        r"|\bn'(?=\w)|\bden(?:y|ies|ied)\b|\bis a myth\b",
        re.IGNORECASE,
    ),
)
_CONTRACTION_RE = re.compile(r"\w+n['’]t\b", re.IGNORECASE)


# Wordings with a negation word that deny nothing: "nothing more than" (= only), "if not the
# only one" (= perhaps the only one), "not only … but", an imperative opening a sentence
# ("Don't drink cold water after a meal" states the claim, it does not deny it).
_NOT_DENIALS = re.compile(
    r"\b(?:nothing (?:more|less|other) than|nothing but|if not (?:the|a|an|all|most|more)"
    r"|not only|not just|not least|no doubt|no wonder|no matter|none other than|not to mention"
    r"|(?:can't|cannot|can not) wait)\b"
    # "non-binary", "non-citizens": a prefix of one word, no denial of the sentence.
    r"|\bnon-(?=\w)"
    r"|(?:^|(?<=[.!?:;…]\s))(?:don't|do not|never)\b",
    re.IGNORECASE,
)


def _without_non_denials(text: str) -> str:
    return _NOT_DENIALS.sub(" ", text)


def negation_cues(text: str) -> list[str]:
    """The negation cues of `text`, in order (repeats kept: their count matters)."""
    folded = _without_non_denials(_fold(text))
    cues = [m.group(0).casefold() for m in _CONTRACTION_RE.finditer(folded)]
    without = _CONTRACTION_RE.sub(" ", folded)
    cues += [w for w in _words(without) if w in _NEGATION_WORDS]
    return cues + _phrase_cues(without)


def _phrase_cues(text: str) -> list[str]:
    return [m.group(0).casefold() for p in _NEGATION_PHRASES for m in p.finditer(text)]


_SCOPE_WORDS = 3  # content words after a cue that say what it denies
_SCOPE_REACH = 8  # words after a cue searched for them
_COMPARABLE = 0.4  # share of the shorter text's content words the longer has


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w not in ENGLISH_STOPWORDS and w not in _NEGATION_WORDS]


def _has(word: str, vocabulary: set[str]) -> bool:
    """Whether `vocabulary` (words and their stems) has `word` or a form of it."""
    return word in vocabulary or stem(word) in vocabulary or word[:5] in vocabulary


def _vocabulary(words: list[str]) -> set[str]:
    return set(words) | {stem(w) for w in words} | {w[:5] for w in words if len(w) >= 5}


def comparable(text: str, other: str) -> bool:
    """Whether the two texts share enough words for word-level rules to line them up (texts
    in two languages hardly do)."""
    own = _content(_words(_fold(text)))
    other_content = _content(_words(_fold(other)))
    shorter = own if len(own) <= len(other_content) else other_content
    longer = _vocabulary(other_content if shorter is own else own)
    return bool(shorter) and sum(_has(w, longer) for w in shorter) >= _COMPARABLE * len(shorter)


def scoped_cues(text: str, other: str) -> list[str]:
    """The negation cues of `text` that deny something `other` also says. A word cue whose
    next content words ("not [safe for pregnant]") are all absent from `other` denies
    something else ("… or we never come back" added to a claim), so it is left out; phrases
    ("It is false that") and cues with no content word after them always count. Texts that
    hardly share words (other languages) keep every cue."""
    vocabulary = _vocabulary(_words(_fold(other)))
    if not comparable(text, other):
        return negation_cues(text)
    cues: list[str] = []
    for sentence in _SENTENCE_END_RE.split(_fold(text)):
        sentence = _without_non_denials(sentence)
        words = _words(sentence)
        for n, word in enumerate(words):
            if word not in _NEGATION_WORDS and not _CONTRACTION_RE.fullmatch(word):
                continue
            scope = _content(words[n + 1 : n + 1 + _SCOPE_REACH])[:_SCOPE_WORDS]
            if not scope or any(_has(w, vocabulary) for w in scope):
                cues.append(word)
        cues += _phrase_cues(_CONTRACTION_RE.sub(" ", sentence))
    return cues


# Negated wordings that say what a positive word of the other text says: "no longer" for
# "ended"/"banned", "no country … more than" for "the largest", "no risk" for "safe". Such a
# "no" is no negation cue when the other text has the positive word and this one does not
# ("no longer banned" still denies "banned").
_BANNED = re.compile(
    r"\b(?:ban|bans|banned|banning|block|blocks|blocked|blocking|prohibit|prohibits|prohibited"
    r"|forbid|forbids|forbidden|disallow|disallows|disallowed|outlaw|outlawed|bar|barred"
    r"|refuse|refuses|refused)\b",
    re.IGNORECASE,
)
_POSITIVE_FORMS: tuple[tuple[re.Pattern[str], re.Pattern[str], str | None], ...] = (
    (
        re.compile(r"\bno longer\b", re.IGNORECASE),
        re.compile(r"\b(?:end|ended|ends|ban|bans|banned|stop|stopped|halt|halted|over)\b", re.I),
        None,
    ),
    (
        re.compile(r"\bno (?:\w+ ){1,4}?(?:more|less|fewer|\w{2,}er) (?:\w+ ){0,3}?than\b", re.I),
        re.compile(r"\b(?:most|least|fewest|\w{2,}est)\b", re.IGNORECASE),
        None,
    ),
    (
        # "did not allow", "won't be permitted", "denied" for "banned", "blocked", "prohibited"
        re.compile(
            r"\b(?:(?:do|does|did|is|are|was|were|will|would|can|could|should) not|\w+n't|never)"
            r" (?:be |been )?(?:allow|allows|allowed|allowing|permit|permits|permitted)\b"
            r"|\bden(?:y|ies|ied|ying)\b",
            re.IGNORECASE,
        ),
        _BANNED,
        "banned",
    ),
    (
        # "don't want them to get it" for "prevent them from getting it"
        re.compile(r"\b(?:(?:do|does|did) not|don't|doesn't|didn't) want\b", re.IGNORECASE),
        re.compile(r"\b(?:prevent|prevents|prevented|preventing|stop|stops|stopped)\b", re.I),
        "want to prevent",
    ),
    (
        re.compile(r"\bno (?:special |real |serious |health )?(?:risk|danger|threat)\b", re.I),
        re.compile(r"\b(?:safe|safely|harmless)\b", re.IGNORECASE),
        "safe",  # so the antonym rule does not read "risk" against "safe"
    ),
)


def _without_positive_forms(text: str, other: str) -> str:
    for negated, positive, replacement in _POSITIVE_FORMS:
        if positive.search(other) and not positive.search(text):
            if replacement is None:  # the phrase without its leading "no "
                text = negated.sub(lambda m: m.group(0)[3:], text)
            else:
                text = negated.sub(replacement, text)
    return text


def _negation(post: str, claim: str) -> Mismatch | None:
    # The count, not its parity: a negation added to a claim that already negates something
    # else ("did not say it is not safe" against "did not say it is safe") must not cancel.
    ours, theirs = scoped_cues(post, claim), scoped_cues(claim, post)
    if len(ours) == len(theirs):
        return None
    return Mismatch(
        MismatchKind.NEGATION,
        f"post {_cue_list(ours)}, fact-checked claim {_cue_list(theirs)}",
    )


def _cue_list(cues: list[str]) -> str:
    return "negates (" + ", ".join(repr(c) for c in cues) + ")" if cues else "does not negate"


# --- antonyms ---------------------------------------------------------------------------------


def _antonym(post: str, claim: str) -> Mismatch | None:
    found = antonyms.antonym_difference(_words(_fold(post)), _words(_fold(claim)))
    return Mismatch(MismatchKind.ANTONYM, found) if found else None


def _join(words: Iterable[str]) -> str:
    return "/".join(repr(w) for w in sorted(words))


# --- numbers ----------------------------------------------------------------------------------

_NUMBER_WORDS: dict[str, float] = {
    w: float(n)
    for n, w in enumerate(
        _family_order(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
}
_NUMBER_WORDS.update(
    {
        w: 10 * n
        for n, w in enumerate(_family_order("thirty forty fifty sixty seventy eighty ninety"), 3)
    }
)
_NUMBER_WORDS.update({"hundred": 100, "dozen": 12, "half": 0.5, "twice": 2, "thrice": 3})
# Digits right after letters are part of a name or a formula ("CO2", "H5N1"); after a hyphen
# they still count ("COVID-19", "mid-2017").
_GLUED_RE = re.compile(r"(?<=[^\W\d_])\d+(?:[.,]\d+)*")
_MULTIPLIERS = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "mio": 1e6,
    "millionen": 1e6,
    "millones": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "milliard": 1e9,
    "milliarden": 1e9,
    "trillion": 1e12,
    # Spans of years: "three millennia" is "3,000 years".
    "decades": 10,
    "centuries": 100,
    "millennia": 1e3,
}
_MONTHS = {
    m: n
    for n, names in enumerate(
        (
            "january jan januar janvier enero",
            "february feb februar février febrero",
            "march mar märz mars marzo",
            "april apr avril abril",
            "may mai mayo",
            "june jun juni juin junio",
            "july jul juli juillet julio",
            "august aug août agosto",
            "september sep sept septembre septiembre",
            "october oct oktober octobre octubre",
            "november nov novembre noviembre",
            "december dec dezember décembre diciembre",
        ),
        1,
    )
    for m in names.split()
}
_DIGITS_RE = re.compile(r"\d+(?:[.,]\d+)*")
_GROUPED_RE = re.compile(r"^\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*$")


def _digit_value(token: str) -> float:
    if _GROUPED_RE.match(token):
        return float(re.sub(r"[.,]", "", token))
    return float(token.replace(",", "."))


def quantities(text: str) -> set[str]:
    """The quantities `text` states, normalised ("8,000" = "8000" = "eight thousand"; a month
    name is "month 12"), as strings for display."""
    plain = _GLUED_RE.sub(" ", _fold(text)).casefold()
    words = re.findall(r"\d+(?:[.,]\d+)*|[^\W\d_]+", plain)
    found: set[str] = set()
    for i, word in enumerate(words):
        if _DIGITS_RE.fullmatch(word):
            value = _digit_value(word)
        elif word in _NUMBER_WORDS and word not in ("one", "half"):
            # "one" and "half" are mostly not quantities ("one of the", "half the country").
            value = float(_NUMBER_WORDS[word])
        elif word in _MONTHS and (word != "may" or _dated(words, i)):
            found.add(f"month {_MONTHS[word]}")
            continue
        else:
            continue
        following = words[i + 1] if i + 1 < len(words) else ""
        value *= _MULTIPLIERS.get(following, 1.0)
        found.add(f"{value:g}")
    return found


def _dated(words: list[str], i: int) -> bool:
    """ "May" as a month: next to a number ("May 2020", "3 May")."""
    near = words[max(0, i - 1) : i] + words[i + 1 : i + 2]
    return any(_DIGITS_RE.fullmatch(w) for w in near)


# Units of time, singular: "for months" against "for three seconds" is another quantity
# even when the post gives no number.
_TIME_UNITS = {
    w: w.removesuffix("s")
    for w in _family_order(
        "second seconds minute minutes hour hours day days week weeks month months year years"
    )
}


def _units(text: str) -> set[str]:
    return {_TIME_UNITS[w] for w in _words(_fold(text)) if w in _TIME_UNITS}


def _changed_unit(post: str, claim: str) -> Mismatch | None:
    ours, theirs = _units(post), _units(claim)
    if ours - theirs and theirs - ours:
        return Mismatch(
            MismatchKind.NUMBER,
            f"post counts in {_join(ours - theirs)}, fact-checked claim in {_join(theirs - ours)}",
        )
    return None


def _number(post: str, claim: str) -> Mismatch | None:
    ours, theirs = quantities(post), quantities(claim)
    # A swap only: a post that adds a detail the claim leaves out ("32-year-old", "in January
    # of 2016" for "come 2016") still repeats it; on real tweets such additions demoted right
    # matches. A month counts only against another month.
    months = {q for q in ours | theirs if q.startswith("month")}
    if not any(q in months for q in theirs):
        ours = ours - months
    extra, missing = ours - theirs, theirs - ours
    if not extra or not missing:
        return _changed_unit(post, claim)
    shown = ", ".join(sorted(extra))
    return Mismatch(
        MismatchKind.NUMBER,
        f"post states {shown}, fact-checked claim "
        + (f"states {', '.join(sorted(theirs))}" if theirs else "states no number"),
    )


# --- named entities (`pipeline.claims.polarity.names`)
# ----------------------------------------------


def entities(text: str) -> set[str]:
    """Names in `text` (see `pipeline.claims.polarity.names.entities`)."""
    return names.entities(text, _NEGATION_WORDS)


def _entity(post: str, claim: str) -> Mismatch | None:
    found = names.entity_difference(post, claim, _NEGATION_WORDS)
    return Mismatch(MismatchKind.ENTITY, found) if found else None


def _predicate(post: str, claim: str) -> Mismatch | None:
    # The table is English: a post in another language has no word of it.
    found = predicate_difference(post, claim) if comparable(post, claim) else None
    return Mismatch(MismatchKind.PREDICATE, found) if found else None


# --- dispute ----------------------------------------------------------------------------------

# Words with which a post disputes, debunks or distances itself from what it repeats ("Fake
# news again: X", "Not true at all: X", "People keep claiming that X"). Such a post quotes the
# claim to reject it: a templated "rated false" reply under it would misread its author, so a
# moderator decides. A marker the fact-checked claim itself uses ("X is a hoax") is no dispute.
# Words with a common literal sense are left out ("dumped in the rubbish", "lies in", "lying").
_DISPUTE_RE = re.compile(
    r"\b(?:fake(?: news)?|hoax(?:es)?|myths?|debunk(?:ed|s|ing)?|not true|untrue|false(?:ly)?"
    r"|misinformation|disinformation|misleading|nonsense|bogus|baseless|no evidence"
    r"|conspiracy theor(?:y|ies)|rumou?rs?"
    r"|(?:stop|don't|do not) (?:sharing|share|spreading|spread|believing|believe)"
    r"|(?:claim|claims|claimed|claiming|say|says|saying) that"
    r"|falsch\w*|gerücht\w*|lüge\w*|faux|fausse|infox|intox|rumeur\w*|mensonges?"
    r"|falsos?|falsas?|bulos?|mentiras?|bufal[ae]|boatos?|onwaar|nepnieuws|fabels?)\b",
    re.IGNORECASE,
)


def dispute_markers(text: str) -> set[str]:
    """The dispute markers of `text`, folded ("fake news", "not true", "claiming that")."""
    return {m.group(0).casefold() for m in _DISPUTE_RE.finditer(_fold(text))}


def _dispute(post: str, claim: str) -> Mismatch | None:
    extra = dispute_markers(post) - dispute_markers(claim)
    if not extra:
        return None
    listed = ", ".join(repr(m) for m in sorted(extra))
    return Mismatch(MismatchKind.DISPUTE, f"the post disputes or distances itself ({listed})")


# --- all together -----------------------------------------------------------------------------

_CHECKS = (
    (MismatchKind.NEGATION, _negation),
    (MismatchKind.ANTONYM, _antonym),
    (MismatchKind.NUMBER, _number),
    (MismatchKind.ENTITY, _entity),
    (MismatchKind.PREDICATE, _predicate),
    (MismatchKind.DISPUTE, _dispute),
)


def compare(
    post_claim: str, checked_claim: str, *, kinds: Iterable[MismatchKind] = ALL_KINDS
) -> list[Mismatch]:
    """Every way the post's claim reverses or replaces the fact-checked claim (empty: none
    found, so a strong match may stand)."""
    wanted = set(kinds)
    # Boilerplate (signature, links, handles) is no claim, a curly apostrophe no other word.
    post_claim = strip_boilerplate(post_claim) or post_claim
    checked_claim = strip_boilerplate(checked_claim) or fold_quotes(checked_claim)
    post = _without_positive_forms(post_claim, checked_claim)
    claim = _without_positive_forms(checked_claim, post_claim)
    found = []
    for kind, check in _CHECKS:
        if kind in wanted:
            mismatch = check(post, claim)
            if mismatch is not None:
                found.append(mismatch)
    return found
