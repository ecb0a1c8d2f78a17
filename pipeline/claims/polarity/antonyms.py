"""Opposite words from WordNet, for the antonym rule of `pipeline.claims.polarity.compare`.

The curated table of `pipeline.claims.polarity.compare` holds the families claims reverse most
(more/less, safe/dangerous); on rewrites of real fact-checks it let 28 % of antonym swaps through
(issue 29: encourages/discourages, stopped/started, found/missing). Princeton WordNet 3.0's
antonym pointers, with the words derived from them, are bundled as
`pipeline/data/antonyms_wordnet.tsv` (made by `tools/wordnet_antonyms.py` from Debian's
`wordnet-base`; 6,286 pairs) and read here.

A swap is a word only one text has whose WordNet opposite only the other text has; both are
compared as lemmas (WordNet's own detachment rules for -s/-es/-ed/-ing/-er/-est and its
exception lists for "rose"/"rise", "stopped"/"stop"), so "encourages" meets "discourage".
Whole words only: "information" never contains "formation".

Pairs that ordinary paraphrases use for other senses were measured out on paraphrases of the
train fact-checks and real tweets repeating them (bench/claim_reversals.py) and are left out
in `_COMMON_SENSE_PAIRS`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from importlib import resources

from pipeline.claims.polarity.predicates import word_rows

# (suffix, replacement) per WordNet's morphy, all parts of speech at once.
_DETACHMENT = (
    ("s", ""),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
    ("es", "e"),
    ("es", ""),
    ("ed", "e"),
    ("ed", ""),
    ("ing", "e"),
    ("ing", ""),
    ("er", ""),
    ("est", ""),
    ("er", "e"),
    ("est", "e"),
)

# Pairs WordNet states that a claim and its paraphrase use in unrelated senses; read as
# opposites they demote true repeats (measured in bench/claim_reversals.py).
_COMMON_SENSE_TEXT = """
    in/out on/off up/down one/zero first/last come/go give/take bring/take have/lack
    be/differ do/undo make/break get/lose man/woman men/women day/night left/right
    old/new old/young front/back top/bottom here/there now/then begin/end start/end
    beginning/end inside/outside north/south east/west husband/wife mother/father
    son/daughter brother/sister boy/girl king/queen male/female black/white head/tail
    natural/unnatural public/private home/away push/pull send/receive buy/sell ask/answer
    question/answer teach/learn present/absent present/past past/future early/late full/empty
    long/short hard/soft hard/easy light/dark light/heavy deep/shallow wide/narrow
    general/specific whole/part single/married fact/fiction real/unreal internal/external
    domestic/foreign local/national national/international common/uncommon
"""
_COMMON_SENSE_PAIRS = frozenset(frozenset(p.split("/")) for p in _COMMON_SENSE_TEXT.split())


@cache
def _table() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(word -> its opposites, inflected form -> lemmas) from the bundled file."""
    source = resources.files("pipeline.data").joinpath("antonyms_wordnet.tsv")
    opposites: dict[str, set[str]] = defaultdict(set)
    inflections: dict[str, set[str]] = defaultdict(set)
    section = opposites
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.startswith("# inflections"):
            section = inflections
            continue
        if not line or line.startswith("#"):
            continue
        left, right = line.split("\t")
        if section is opposites:
            if frozenset((left, right)) in _COMMON_SENSE_PAIRS:
                continue
            opposites[left].add(right)
            opposites[right].add(left)
        else:
            inflections[left].add(right)
    return (
        {w: frozenset(o) for w, o in opposites.items()},
        {w: frozenset(lemmas) for w, lemmas in inflections.items()},
    )


def lemmas(word: str) -> set[str]:
    """`word` and the WordNet lemmas it may be a form of (those the table knows)."""
    opposites, inflections = _table()
    found = {word} | set(inflections.get(word, ()))
    for suffix, replacement in _DETACHMENT:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            found.add(word[: -len(suffix)] + replacement)
    # A doubled final consonant before -ed/-ing ("stopped") is in the exception lists only
    # for some verbs.
    for suffix in ("ed", "ing"):
        stem = word.removesuffix(suffix)
        if stem != word and len(stem) >= 3 and stem[-1] == stem[-2]:
            found.add(stem[:-1])
    return {w for w in found if w == word or w in opposites}


def _family(words: str) -> frozenset[str]:
    return frozenset(words.split())


# --- the curated families ---------------------------------------------------------------------

# Each row: two families that say opposite things ("left | right"). Synonyms share a family so
# that a rewording ("reduces" for "lowers") is not a swap.
_ANTONYMS = """
increase increases increased increasing rise rises rising rose risen raise raises raised \
    raising grow grows grew growing grown boost boosts boosted soar soars soared surge \
    surges surged jump jumped climb climbs climbed higher | decrease decreases decreased \
    decreasing fall falls fell fallen falling drop drops dropped dropping decline declines \
    declined declining reduce reduces reduced reducing lower lowers lowered lowering \
    shrink shrinks shrank shrunk plunge plunges plunged slump slumped
more greater larger bigger | less fewer smaller
largest biggest highest most greatest maximum | smallest lowest least fewest minimum
best | worst
better improve improves improved improving | worse worsen worsens worsened worsening
safe safer safest harmless | dangerous unsafe harmful deadly toxic riskier risk risks risky
effective efficacious | ineffective useless
legal lawful allowed permitted legalised legalized | illegal unlawful banned forbidden \
    prohibited outlawed
approve approves approved approval | reject rejects rejected rejection
support supports supported endorse endorses endorsed backed | oppose opposes opposed
accept accepts accepted | refuse refuses refused decline
win wins won winning winner | lose loses lost losing loser
alive survived survives | dead died dies killed
prevent prevents prevented preventing protect protects protected protecting | cause causes \
    caused causing
cure cures cured heal heals healed | worsen worsens
open opens opened reopen reopened | closes closed shut shuts
before earlier | after later
above exceeds | below
rich richer richest wealthy | poor poorer poorest
cheap cheaper cheapest | expensive costlier
hot hotter hottest warm warmer warming | cold colder coldest cool cooler cooling
guilty convicted | innocent acquitted
import imports imported | export exports exported
include includes included | exclude excludes excluded
strengthen strengthens strengthened boost boosts boosted | weaken weakens weakened
strong stronger strongest | weak weaker weakest
benefit benefits beneficial | harm harms
majority | minority
help helps helped helping | hurt hurts hurting
kill kills killed killing | save saves saved saving
positive | negative
gain gains gained gaining | lose loses lost losing
good | bad
calm calmer calming relaxed | hyperactive agitated restless
high | low
thick thicker thickest | thin thinner thinnest
east eastern | west western
north northern | south southern
mehr höher größte steigt gestiegen | weniger niedriger kleinste sinkt gesunken
plus hausse augmente augmenté | moins baisse diminue diminué
más aumenta aumentó sube subió | menos disminuye disminuyó baja bajó
"""
ANTONYM_PAIRS = word_rows(_ANTONYMS)
# A negative prefix on a word the other text has ("effective" / "ineffective"); the base must
# be long enough to be a word of its own, and these bases make ordinary words when prefixed.
_NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis", "de")
_PREFIX_BASE_EXCEPTIONS = _family(
    "form formed forms come side sight crease cident clude vent stance stall tend terest "
    "port press prove mune ject fection fluence sure able cover close charge play "
    "sign signs signed serve serves served test tests tested vote votes voted liver part "
    "parts tail tails fine fined feat bate lay cline scribe pend mand posit tect cent gree "
    "rive sert fuse note light cease tour duct sire pose posed tain tained bris"
)


# The prefix rule reads only bases that name a quality or a state ("vaccinated",
# "effective", "legal"): a noun with a prefix is mostly another word ("information" is no
# "formation" denied, "discount" no "count").
_QUALITY_ENDINGS = (
    "ed",
    "able",
    "ible",
    "ive",
    "al",
    "ful",
    "ent",
    "ant",
    "ic",
    "ous",
    "ary",
    "ory",
    "ate",
    "y",
    "ing",
)


def _prefixed_opposite(ours: set[str], theirs: set[str]) -> str | None:
    for word in sorted(ours):
        for prefix in _NEGATIVE_PREFIXES:
            base = word.removeprefix(prefix).lstrip("-")
            usable = (
                base != word
                and len(base) >= 4
                and base not in _PREFIX_BASE_EXCEPTIONS
                and base.endswith(_QUALITY_ENDINGS)
            )
            if usable and base in theirs and word not in theirs:
                return f"{word!r} against {base!r}"
    return None


def antonym_difference(ours: list[str], theirs: list[str]) -> str | None:
    """How the post's words `ours` reverse the claim's `theirs` by an opposite word (the
    curated families, WordNet's pairs, a negative prefix), or None."""
    for left, right in ANTONYM_PAIRS:
        # A swap: one side's words are more frequent in the post and the other side's in the
        # claim ("prevent more harm" against "cause more harm" while both say "preventing").
        more_left = sum(w in left for w in ours) - sum(w in left for w in theirs)
        more_right = sum(w in right for w in ours) - sum(w in right for w in theirs)
        if more_left * more_right < 0:
            said = left if more_left > 0 else right
            other = right if more_left > 0 else left
            return (
                f"post says {_join(set(ours) & said)}, fact-checked claim says "
                f"{_join(set(theirs) & other)}"
            )
    swap = wordnet_swap(ours, theirs)
    if swap is not None:
        return f"post says {swap[0]!r}, fact-checked claim says {swap[1]!r} (WordNet antonyms)"
    return _prefixed_opposite(set(ours), set(theirs)) or _prefixed_opposite(set(theirs), set(ours))


def _join(words: Iterable[str]) -> str:
    return "/".join(repr(w) for w in sorted(words))


# --- WordNet ------------------------------------------------------------------------------------


def _lemma_set(words: list[str]) -> set[str]:
    return {lemma for w in words for lemma in lemmas(w)}


def wordnet_swap(ours: list[str], theirs: list[str]) -> tuple[str, str] | None:
    """A word only `ours` has and its WordNet opposite only `theirs` has (lemmas
    compared), or None."""
    opposites, _ = _table()
    mine, other = _lemma_set(ours), _lemma_set(theirs)
    only_mine, only_other = mine - other, other - mine
    for word in sorted(only_mine):
        hit = opposites.get(word, frozenset()) & only_other
        if hit:
            return word, min(hit)
    return None
