"""Key predicates for the polarity check (`pipeline.claims.polarity.compare`): does a post say what
the fact-checked claim says about its subject, or something else about the same subject?

"Lemon water helps you stay hydrated when you have the flu" shares its topic words with
"Drinking hot lemon water kills the flu virus" and scores close to a paraphrase, yet it is a
different (and true) claim: what the claim asserts, "kills", is missing from it. A claim's key
predicate is a word of `PREDICATES`, a hand-made table of the verbs (and a few adjectives)
that fact-checked claims turn on (cures, kills, causes, bans, prevents, spreads, contains …).
Each row is a family: the words that make a text assert it, and after "|" the further words
that say the same in a rewording ("destroys" for "kills", "stops" for "prevents"). When a text
asserts a family and the other text has none of the family's words, the two are different
claims. Checked both ways: a post that asserts "cures" where the claim only "soothes" differs
as much as one that drops the claim's "kills".

A near-verbatim copy that puts one content word in place of another ("Antibiotics are effective
against bacterial infections" for "... viral infections") says something else too, unless the
two words are forms of one word or share a row of the table.

Texts in other languages hold no word of the (English) table and are left to the other rules.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

from pipeline.relevance.lexical import ENGLISH_STOPWORDS, stem, strip_links

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)

# triggers | further words accepted as the same predicate (a trigger accepts its own row).
_TABLE = """
cure cures cured curing heal heals healed healing | treat treats treated treating treatment \
    remedy remedies therapy rid clears beat beats fights
treat treats treated treating treatment | cure cures cured heal heals healed remedy therapy
kill kills killed killing | destroy destroys destroyed destroying die dies died death deaths \
    dead deadly lethal fatal eliminate eliminates eliminated neutralise neutralises \
    neutralize neutralizes inactivate inactivates wipe wipes
destroy destroys destroyed destroying | kill kills killed remove removes removed removing \
    eliminate eliminates eliminated wipe wipes wiped ruin ruins ruined damage damages \
    damaged lose loses lost strip strips
cause causes caused causing | lead leads led trigger triggers triggered result results \
    resulted give gives gave get gets got develop develops linked induce induces induced \
    responsible
prevent prevents prevented preventing | protect protects protected protecting protection \
    stop stops stopped block blocks blocked ward avoid avoids immune immunity against \
    catching
protect protects protected protecting | prevent prevents prevented guard guards shield \
    shields safeguard safeguards against good benefit benefits
ban bans banned banning prohibit prohibits prohibited outlaw outlaws outlawed forbid \
    forbids forbidden | illegal block blocks blocked halt halts halted restrict restricts \
    restricted longer disallow disallows disallowed deny denies denied refuse refuses refused \
    remove removes removed take taken took barred allow allowed allowing
spread spreads spreading transmit transmits transmitted transmitting transmission | carry \
    carries carried infect infects infected pass passes passed cause causes caused
contain contains contained containing | include includes included ingredient ingredients \
    inside made have has hold holds in with
visible | see seen sees spot spotted view viewed observe observed photograph photographed
endorse endorses endorsed endorsement | back backs backed support supports supported backing \
    vote votes voted voting
legalise legalises legalised legalize legalizes legalized legalisation legalization | legal \
    allow allows allowed permit permits permitted decriminalise decriminalised \
    decriminalize decriminalized
improve improves improved improving | better help helps boost boosts enhance enhances \
    sharpen sharpens
dehydrate dehydrates dehydrated dehydrating dehydration | dehydrated
radioactive | radiation radioactivity radiate radiates
expand expands expanded expanding | grow grows grew growing taller larger bigger
"""


def word_rows(table: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """The rows of a word table: one row a line, two word sets split by "|"."""
    rows = []
    for line in table.splitlines():
        if line.strip():
            left, _, right = line.partition("|")
            rows.append((frozenset(left.split()), frozenset(right.split())))
    return tuple(rows)


# (words asserting the predicate, words accepted as saying it)
PREDICATES = tuple((said, said | more) for said, more in word_rows(_TABLE))


# A trigger right after one of these is a noun ("for fear of the spread of the virus"), not
# what the text asserts.
_DETERMINERS = frozenset(["the", "a", "an", "its", "their", "his", "her", "this", "that", "of"])


def _words(text: str) -> list[str]:
    plain = strip_links(unicodedata.normalize("NFKC", text)).casefold().replace("’", "'")
    # The second half of a compound describes a noun ("cancer-causing agents",
    # "bacteria-killing ammonia"); it asserts nothing of the text's subject.
    return _WORD_RE.findall(_COMPOUND_RE.sub(" ", plain))


_COMPOUND_RE = re.compile(r"(?<=\w)-\w+")


def _asserted(words: list[str], said: frozenset[str]) -> set[str]:
    return {
        w for n, w in enumerate(words) if w in said and not set(words[n - 1 : n]) & _DETERMINERS
    }


def _dropped(ours: list[str], theirs: list[str]) -> str | None:
    for said, accepted in PREDICATES:
        asserted = _asserted(ours, said)
        if asserted and not set(theirs) & accepted:
            return "/".join(repr(w) for w in sorted(asserted))
    return None


_VERBATIM = 0.8  # share of aligned words that makes a post a near-verbatim copy of a claim
_VERBATIM_MIN_WORDS = 4


def _same_word(a: str, b: str) -> bool:
    if a == b or stem(a) == stem(b) or (len(a) >= 5 and a[:5] == b[:5]):
        return True
    return any(a in accepted and b in accepted for _, accepted in PREDICATES)


def _replaced(ours: list[str], theirs: list[str]) -> str | None:
    """In a near-verbatim copy, one content word in place of another that is not the same."""
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    if min(len(ours), len(theirs)) < _VERBATIM_MIN_WORDS or matcher.ratio() < _VERBATIM:
        return None
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
            continue
        mine, other = ours[i1], theirs[j1]
        content = mine not in ENGLISH_STOPWORDS and other not in ENGLISH_STOPWORDS
        if content and mine.isalpha() and other.isalpha() and not _same_word(mine, other):
            return f"post says {mine!r} in place of {other!r}"
    return None


def predicate_difference(post: str, claim: str) -> str | None:
    """Why the post and the claim assert different things (None: no key predicate differs)."""
    ours, theirs = _words(post), _words(claim)
    missing = _dropped(theirs, ours)
    if missing:
        return f"fact-checked claim says {missing}, the post has no word for it"
    added = _dropped(ours, theirs)
    if added:
        return f"post says {added}, the fact-checked claim has no word for it"
    return _replaced(ours, theirs)
