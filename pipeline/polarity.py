"""Does a post say what a fact-checked claim says, or something else that sounds the same?

Sentence embeddings and word overlap score "X is safe" and "X is not safe" almost alike (the
issue-14 measurement: 97-99% of negated or reversed claims matched strongly, a mean score drop
of 0.06). A strong match is used without a human, so before it may be strong the two claims
are compared by rule for the four changes that reverse or replace what a claim says:

* negation: the parity of negation cues differs ("not", "never", "no longer", n't, "It is not
  true that", "false that", and the common cues of German, French, Spanish, Italian,
  Portuguese and Dutch); two negations cancel, as in "It is not true that X is not Y";
* antonyms: one text uses one side of a curated pair (more/less, largest/smallest,
  increase/decrease, rise/fall, safe/dangerous, ...) and the other text only the other side,
  or a word and its negative prefix form (effective/ineffective, legal/illegal);
* numbers: the post states a quantity, percentage, year or month the claim does not have
  (digits with either separator, "2 million", number words); a post that leaves a number out
  is still the same claim;
* named entities: each text names someone or something the other does not (capitalised
  words not opening a sentence, acronyms, matched loosely so "Lebanese" finds "Lebanon").

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

from pipeline.lexical import ENGLISH_STOPWORDS, strip_links


class MismatchKind(StrEnum):
    NEGATION = "negation"
    ANTONYM = "antonym"
    NUMBER = "number"
    ENTITY = "entity"


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


def negation_cues(text: str) -> list[str]:
    """The negation cues of `text`, in order (repeats kept: their count's parity matters)."""
    folded = _fold(text)
    cues = [m.group(0).casefold() for m in _CONTRACTION_RE.finditer(folded)]
    without = _CONTRACTION_RE.sub(" ", folded)
    cues += [w for w in _words(without) if w in _NEGATION_WORDS]
    for pattern in _NEGATION_PHRASES:
        cues += [m.group(0).casefold() for m in pattern.finditer(without)]
    return cues


def _negation(post: str, claim: str) -> Mismatch | None:
    ours, theirs = negation_cues(post), negation_cues(claim)
    if len(ours) % 2 == len(theirs) % 2:
        return None
    return Mismatch(
        MismatchKind.NEGATION,
        f"post {_cue_list(ours)}, fact-checked claim {_cue_list(theirs)}",
    )


def _cue_list(cues: list[str]) -> str:
    return "negates (" + ", ".join(repr(c) for c in cues) + ")" if cues else "does not negate"


# --- antonyms ---------------------------------------------------------------------------------


# Each pair: two families that say opposite things. Synonyms share a family so that a
# rewording ("reduces" for "lowers") is not a swap.
ANTONYM_PAIRS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (
        _family(
            "increase increases increased increasing rise rises rising rose risen raise raises "
            "raised raising grow grows grew growing grown boost boosts boosted soar soars "
            "soared surge surges surged jump jumped climb climbs climbed higher"
        ),
        _family(
            "decrease decreases decreased decreasing fall falls fell fallen falling drop drops "
            "dropped dropping decline declines declined declining reduce reduces reduced "
            "reducing lower lowers lowered lowering shrink shrinks shrank shrunk plunge "
            "plunges plunged slump slumped"
        ),
    ),
    (_family("more greater larger bigger"), _family("less fewer smaller")),
    (
        _family("largest biggest highest most greatest maximum"),
        _family("smallest lowest least fewest minimum"),
    ),
    (_family("best"), _family("worst")),
    (
        _family("better improve improves improved improving"),
        _family("worse worsen worsens worsened worsening"),
    ),
    (
        _family("safe safer safest harmless"),
        _family("dangerous unsafe harmful deadly toxic riskier"),
    ),
    (
        _family("effective efficacious"),
        _family("ineffective useless"),
    ),
    (
        _family("legal lawful allowed permitted legalised legalized"),
        _family("illegal unlawful banned forbidden prohibited outlawed"),
    ),
    (_family("approve approves approved approval"), _family("reject rejects rejected rejection")),
    (
        _family("support supports supported endorse endorses endorsed backed"),
        _family("oppose opposes opposed"),
    ),
    (_family("accept accepts accepted"), _family("refuse refuses refused decline")),
    (_family("win wins won winning winner"), _family("lose loses lost losing loser")),
    (_family("alive survived survives"), _family("dead died dies killed")),
    (
        _family("prevent prevents prevented preventing protect protects protected protecting"),
        _family("cause causes caused causing"),
    ),
    (_family("cure cures cured heal heals healed"), _family("worsen worsens")),
    (_family("open opens opened reopen reopened"), _family("closes closed shut shuts")),
    (_family("before earlier"), _family("after later")),
    (_family("above exceeds"), _family("below")),
    (_family("rich richer richest wealthy"), _family("poor poorer poorest")),
    (_family("cheap cheaper cheapest"), _family("expensive costlier")),
    (
        _family("hot hotter hottest warm warmer warming"),
        _family("cold colder coldest cool cooler cooling"),
    ),
    (_family("guilty convicted"), _family("innocent acquitted")),
    (_family("import imports imported"), _family("export exports exported")),
    (_family("include includes included"), _family("exclude excludes excluded")),
    (_family("strengthen strengthens strengthened"), _family("weaken weakens weakened")),
    (_family("benefit benefits beneficial"), _family("harm harms")),
    (_family("majority"), _family("minority")),
    (_family("help helps helped helping"), _family("hurt hurts hurting")),
    (_family("kill kills killed killing"), _family("save saves saved saving")),
    (_family("positive"), _family("negative")),
    (_family("gain gains gained gaining"), _family("lose loses lost losing")),
    (_family("good"), _family("bad")),
    (_family("high"), _family("low")),
    (_family("thick thicker thickest"), _family("thin thinner thinnest")),
    (
        _family("mehr höher größte steigt gestiegen"),
        _family("weniger niedriger kleinste sinkt gesunken"),
    ),
    (_family("plus hausse augmente augmenté"), _family("moins baisse diminue diminué")),
    (_family("más aumenta aumentó sube subió"), _family("menos disminuye disminuyó baja bajó")),
)
# A negative prefix on a word the other text has ("effective" / "ineffective"); the base must
# be long enough to be a word of its own, and these bases make ordinary words when prefixed.
_NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis")
_PREFIX_BASE_EXCEPTIONS = _family(
    "form formed forms come side sight crease cident clude vent stance stall tend terest "
    "port press prove mune ject fection fluence sure able cover close charge play"
)


def _prefixed_opposite(ours: set[str], theirs: set[str]) -> str | None:
    for word in sorted(ours):
        for prefix in _NEGATIVE_PREFIXES:
            base = word.removeprefix(prefix).lstrip("-")
            usable = base != word and len(base) >= 4 and base not in _PREFIX_BASE_EXCEPTIONS
            if usable and base in theirs and word not in theirs:
                return f"{word!r} against {base!r}"
    return None


def _antonym(post: str, claim: str) -> Mismatch | None:
    ours, theirs = _words(_fold(post)), _words(_fold(claim))
    for left, right in ANTONYM_PAIRS:
        # A swap: one side's words are more frequent in the post and the other side's in the
        # claim ("prevent more harm" against "cause more harm" while both say "preventing").
        more_left = sum(w in left for w in ours) - sum(w in left for w in theirs)
        more_right = sum(w in right for w in ours) - sum(w in right for w in theirs)
        if more_left * more_right < 0:
            said = left if more_left > 0 else right
            other = right if more_left > 0 else left
            return Mismatch(
                MismatchKind.ANTONYM,
                f"post says {_join(set(ours) & said)}, fact-checked claim says "
                f"{_join(set(theirs) & other)}",
            )
    found = _prefixed_opposite(set(ours), set(theirs)) or _prefixed_opposite(set(theirs), set(ours))
    if found:
        return Mismatch(MismatchKind.ANTONYM, found)
    return None


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
    words = re.findall(r"\d+(?:[.,]\d+)*|[^\W\d_]+", _fold(text).casefold())
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


def _number(post: str, claim: str) -> Mismatch | None:
    ours, theirs = quantities(post), quantities(claim)
    extra = ours - theirs
    if not extra:
        return None
    shown = ", ".join(sorted(extra))
    return Mismatch(
        MismatchKind.NUMBER,
        f"post states {shown}, fact-checked claim "
        + (f"states {', '.join(sorted(theirs))}" if theirs else "states no number"),
    )


# --- named entities ---------------------------------------------------------------------------

_ENTITY_PREFIX = 5  # letters two names must share to be the same one ("Lebanese", "Lebanon")
# Capitalised because they open a sentence or are shouted, not because they name anyone.
_NOT_NAMES = ENGLISH_STOPWORDS | _NEGATION_WORDS | {"breaking", "video", "photo", "watch", "new"}
# Acronyms that are also function words when written in lower case.
_ACRONYMS_LIKE_WORDS = frozenset({"WHO", "US", "UK", "EU", "UN", "IT", "AI"})
_NAME_RE = re.compile(r"[^\W\d_][^\W_]*(?:['’-][^\W\d_]+)*", re.UNICODE)


# A single capitalised word opening a sentence is usually an ordinary word ("Drinking",
# "Reports"); there it counts as a name only when it is a country (or its adjective, matched
# by prefix), an acronym or a possessive. Elsewhere every capitalised word counts.
_COUNTRIES = _family(
    "afghanistan albania algeria angola argentina armenia australia austria azerbaijan "
    "bahrain bangladesh belarus belgium bolivia bosnia brazil bulgaria cambodia cameroon "
    "canada chad chile china colombia congo croatia cuba cyprus czechia denmark djibouti "
    "ecuador egypt eritrea estonia ethiopia finland france georgia germany ghana greece "
    "guatemala haiti honduras hungary iceland india indonesia iran iraq ireland israel "
    "italy jamaica japan jordan kazakhstan kenya korea kosovo kuwait kyrgyzstan laos latvia "
    "lebanon liberia libya lithuania luxembourg madagascar malawi malaysia mali malta "
    "mauritania mexico moldova mongolia montenegro morocco mozambique myanmar namibia nepal "
    "netherlands nicaragua niger nigeria norway oman pakistan palestine panama paraguay "
    "peru philippines poland portugal qatar romania russia rwanda senegal serbia singapore "
    "slovakia slovenia somalia spain sudan sweden switzerland syria taiwan tajikistan "
    "tanzania thailand tunisia turkey turkiye uganda ukraine uruguay uzbekistan venezuela "
    "vietnam yemen zambia zimbabwe britain england scotland wales europe africa asia "
    "america"
)
_COUNTRY_KEYS = frozenset(c[:_ENTITY_PREFIX] for c in _COUNTRIES)


# Words that stand before a name without being it ("President Biden" is "Joe Biden").
_TITLES = _family(
    "president pope minister prime king queen prince princess governor director general "
    "secretary chancellor senator mayor sheikh sheikha emir dr mr mrs ms sir lord lady saint "
    "his her highness majesty excellency vice deputy chief former it's that's there's what's"
)


def _capitalised(word: str) -> bool:
    folded = word.casefold()
    if word in _ACRONYMS_LIKE_WORDS:
        return True
    if folded in _MONTHS or folded in _NOT_NAMES:
        return False
    return (len(word) >= 2 and word.isupper()) or (word[:1].isupper() and len(word) >= 3)


def _opening_name(word: str) -> bool:
    """Whether a lone capitalised word opening a sentence is a name (see `_COUNTRIES`)."""
    base = re.sub(r"['’]s$", "", word)
    return word.isupper() or base != word or base.casefold()[:_ENTITY_PREFIX] in _COUNTRY_KEYS


def entities(text: str) -> set[str]:
    """Names in `text`: runs of capitalised words and acronyms ("Joe Biden", "WHO"), less
    function words and month names (compared as numbers) and sentence openers that are
    ordinary words."""
    found: set[str] = set()
    for sentence in _SENTENCE_END_RE.split(_fold(text)):
        words = _NAME_RE.findall(sentence)
        run: list[str] = []
        for n, word in enumerate([*words, ""]):
            if word and _capitalised(word):
                run.append(word)
                continue
            opening = n == len(run)  # the run starts the sentence
            if run and (len(run) > 1 or not opening or _opening_name(run[0])):
                found.add(" ".join(run))
            run = []
    return found


def _parts(name: str) -> list[str]:
    """The words of a name that identify it: "Obama-CoV-2" gives "obama", "cov"; titles
    ("President Biden") and a possessive "'s" are left out."""
    parts = re.split(r"[\s'’-]+", re.sub(r"['’]s\b", "", name.casefold()))
    return [
        p
        for p in parts
        if (len(p) >= 3 or (len(p) >= 2 and name.isupper()))
        and p not in _TITLES
        and (name.isupper() or p not in _NOT_NAMES)
    ]


def _present(part: str, words: list[str]) -> bool:
    """Whether the other text has the word `part` (by prefix: "Lebanese" for "Lebanon")."""
    key = part[:_ENTITY_PREFIX]
    return any(
        w.startswith(key) or (len(w) >= 4 and part.startswith(w[:_ENTITY_PREFIX])) for w in words
    )


def _initials(text: str) -> set[str]:
    """Acronyms the text spells out: "United States" gives "us"."""
    runs: set[str] = set()
    run: list[str] = []
    for word in [*_NAME_RE.findall(_fold(text)), ""]:
        if word[:1].isupper():
            run.append(word[0].casefold())
            continue
        for start in range(len(run)):
            for end in range(start + 2, len(run) + 1):
                runs.add("".join(run[start:end]))
        run = []
    return runs


def _missing(names: set[str], other: str) -> list[str]:
    """The name words of `names` that `other` lacks. A name counts word by word, so "Oxford
    Security Service" against "State Security Service" lacks "oxford"; an acronym and the
    words it stands for ("US", "United States") are the same name."""
    words = _words(_fold(other))
    acronyms = {w.casefold() for w in _NAME_RE.findall(_fold(other)) if w.isupper()}
    initials = _initials(other)
    missing: set[str] = set()
    for name in names:
        if name.isupper() and name.casefold() in initials:
            continue
        if " " in name and "".join(w[0] for w in name.casefold().split()) in acronyms:
            continue
        missing.update(p for p in _parts(name) if not _present(p, words))
    return sorted(missing)


def _entity(post: str, claim: str) -> Mismatch | None:
    missing_in_claim = _missing(entities(post), claim)
    missing_in_post = _missing(entities(claim), post)
    # Only a swap counts: a post that names someone more, or less, can still be the claim.
    if not missing_in_claim or not missing_in_post:
        return None
    return Mismatch(
        MismatchKind.ENTITY,
        f"post names {', '.join(missing_in_claim)}; fact-checked claim names "
        f"{', '.join(missing_in_post)}",
    )


# --- all together -----------------------------------------------------------------------------

_CHECKS = (
    (MismatchKind.NEGATION, _negation),
    (MismatchKind.ANTONYM, _antonym),
    (MismatchKind.NUMBER, _number),
    (MismatchKind.ENTITY, _entity),
)


def compare(
    post_claim: str, checked_claim: str, *, kinds: Iterable[MismatchKind] = ALL_KINDS
) -> list[Mismatch]:
    """Every way the post's claim reverses or replaces the fact-checked claim (empty: none
    found, so a strong match may stand)."""
    wanted = set(kinds)
    found = []
    for kind, check in _CHECKS:
        if kind in wanted:
            mismatch = check(post_claim, checked_claim)
            if mismatch is not None:
                found.append(mismatch)
    return found
