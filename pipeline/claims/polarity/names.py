"""Named entities for the polarity check (`pipeline.claims.polarity.compare`): does a post name
someone or something else than the fact-checked claim?

Names are runs of capitalised words and acronyms, less function words, month names,
sentence openers that are ordinary words, shouted ordinary words ("UPDATE:", "BUT OF COURSE":
`pipeline.claims.polarity.common_words`) and contractions; a comma, a bracket, a quotation
mark or a number ends a run, an abbreviated title ("Sen.") does not end a sentence. Two names
are the same when a word of one is a word of the other up to a short ending ("Lebanese" and
"Lebanon", "Salameh" and "Salama") or both romanise one name ("Saied" and "Saeed", "Mousa"
and "Musa"), an acronym spells out the other ("US", "United States"; "PSG", "Paris
Saint-Germain"), or both are writings of one name in `_ALIASES` ("America" and "the United
States", "Covid" and "the coronavirus"). A name counts as present when any of its words is,
so "Trump" stands for "Donald Trump" (unless the other text names another "… Trump").

A post and a claim differ in who or what they are about when

* each names something the other does not (a swap: "India" against "China"), or
* one puts a name where the other has a different word, in texts that otherwise line up
  ("The Obama medical team" against "The Algerian medical team"): one name added in place of
  another word, found by aligning the two word sequences (`difflib`), or
* they carry different single-letter codes ("Vitamin C" against "Vitamin D").

A post that only names someone more or less than the claim, elsewhere, can still be the claim.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

from pipeline.claims.polarity.common_words import ordinary
from pipeline.relevance.lexical import ENGLISH_STOPWORDS, strip_links

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
# A sentence ends at its punctuation, but not at the full stop of a rank or title written short
# ("U.S. Sen. Bernie Sanders", "Lt. Col. Alexander Vindman"): split there, "Sen" was a name
# of its own that no post has.
_SHORT_TITLES = (
    "Sen",
    "Rep",
    "Gov",
    "Gen",
    "Col",
    "Sgt",
    "Rev",
    "Capt",
    "Mrs",
    "Jr",
    "Dr",
    "Mr",
    "Ms",
    "Lt",
)
_SENTENCE_END_RE = re.compile(
    "".join(rf"(?<!\b{t})" for t in _SHORT_TITLES) + r"[.!?:;…]+[\"'”’)]*\s+|\n+"
)
_NAME_RE = re.compile(r"[^\W\d_][^\W_]*(?:['’-][^\W\d_]+)*", re.UNICODE)
# A comma, a bracket or a quotation mark ends a name: "Bronx, New York" is two places and
# "Biden, Pelosi, Kerry" three people, not one name of many words.
_RUN_BREAKS = frozenset(',;()[]"“”')
# A number ends a name too: "Today 10-3-16 Trump" is no name "Today Trump".
_BREAK_STARTS = _RUN_BREAKS | frozenset("0123456789")
_NAME_OR_BREAK_RE = re.compile(_NAME_RE.pattern + r"|[,;()\[\]\"“”]|\d[\w/.-]*", re.UNICODE)

# Two name words are one when they share this many letters and differ by an ending of at most
# `_ENDING` letters: "Lebanese"/"Lebanon", "Algerian"/"Algeria", "Salameh"/"Salama", but not
# "CoronaVac"/"coronavirus" or "Air"/"airport".
_STEM = 4
_ENDING = 3
# A name of more words than this is mostly a headline's run of capitals: it names someone
# else than a shorter name with a word in common only in the slot beside that word.
_SHORT_NAME = 3
_MAX_SUBSTITUTION = 3  # words on each side of an aligned replacement that can hold a name
# Texts line up when this share of their words aligns. A tweet that wraps the claim in its own
# words aligns little, and difflib then pairs unrelated stretches: on the CheckThat! train
# tweets "'donald' in place of 'bombshell'", "'america' in place of 'is'" demoted right
# matches (issue 29).
_LINED_UP = 0.5
_VERBATIM = 0.8  # share of aligned words that makes a post a near-verbatim copy of a claim
_VERBATIM_MIN_WORDS = 3

# Capitalised because they open a sentence or are shouted, not because they name anyone.
_EXTRA_NOT_NAMES = frozenset(
    {"breaking", "video", "photo", "watch", "new", "urgent"}
    # Shouted replies and abbreviations of chat ("NOPE", "WTF", "ID badges").
    | {"nope", "yep", "yup", "lol", "omg", "wtf", "smh", "lmao", "wow", "fyi", "ok", "id"}
)
_POSSESSIVE_RE = re.compile(r"'s$")
_CONTRACTIONS = ("n't", "'re", "'ll", "'ve", "'m", "'d")
# Acronyms that are also function words when written in lower case.
_ACRONYMS_LIKE_WORDS = frozenset({"WHO", "US", "UK", "EU", "UN", "IT", "AI"})


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_MONTHS = _set(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)

# Writings of one name, rewritten to the first before names are compared. Longer writings
# come first so "United States of America" is not left as "America of America".
_ALIASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), canonical)
    for pattern, canonical in (
        (r"\b(?:[Tt]he )?United States(?: of America)?\b|\bU\.S\.(?:A\.)?|\bUSA?\b", "America"),
        (r"\b(?:[Tt]he )?United Kingdom\b|\bU\.K\.|\bUK\b|\bGreat Britain\b", "Britain"),
        (
            r"\b(?:[Tt]he )?(?:novel )?[Cc]oronavirus(?:es)?\b|\bCorona\b|\bCOVID(?:-?19)?\b"
            r"|\bCovid(?:-?19)?\b|\bSARS-CoV-2\b",
            "Covid",
        ),
        (r"\bW\.H\.O\.|\bWorld Health Organi[sz]ation\b", "WHO"),
    )
)
# Adjectives of place that do not start with the place's name.
_DEMONYMS = {
    "french": "france",
    "dutch": "netherlands",
    "spanish": "spain",
    "swiss": "switzerland",
    "welsh": "wales",
    "danish": "denmark",
    "swedish": "sweden",
    "finnish": "finland",
    "norwegian": "norway",
    "polish": "poland",
    "filipino": "philippines",
    "emirati": "emirates",
    "british": "britain",
    "american": "america",
}

# A single capitalised word opening a sentence is usually an ordinary word ("Drinking",
# "Reports"); there it counts as a name only when it is a country (or its adjective, matched
# by its first letters), an acronym or a possessive. Elsewhere every capitalised word counts.
_COUNTRIES = _set(
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
_COUNTRY_KEYS = frozenset(c[:5] for c in _COUNTRIES)

# Words that stand before a name without being it ("President Biden" is "Joe Biden").
_TITLES = _set(
    "president pope minister prime king queen prince princess governor director general "
    "secretary chancellor senator mayor sheikh sheikha emir dr mr mrs ms sir lord lady "
    "saint his her highness majesty excellency vice deputy chief former it's that's "
    "there's what's"
)
# Abbreviated ranks and roles that Snopes writes before a name ("U.S. Rep. Ilhan Omar", "Actor
# Jeff Goldblum"); a post names the person without them. Only before another word of the name
# are they titles: alone ("the state of Rep") they may stand for a name.
_NAME_TITLES = _set(
    "sen rep reps gen gov lt col sgt capt rev jr congressman congresswoman representative "
    "actor actress astronaut economist singer rapper comedian anchor journalist reporter "
    "professor activist"
)
# Titles that stand for a person's first name ("President Biden" for "Joe Biden").
_PERSON_TITLES = _set(
    "president pope minister king queen prince princess governor chancellor senator mayor "
    "sheikh sheikha emir dr mr mrs ms sir lord lady"
)
# Single capital letters that are words, not codes.
_LETTER_WORDS = frozenset({"A", "I", "O"})
_CODE_RE = re.compile(r"(?<![\w.'’-])([A-Z])(?![\w.'’-])")


def _fold(text: str) -> str:
    plain = strip_links(unicodedata.normalize("NFKC", text)).replace("#", " ").replace("_", " ")
    plain = plain.replace("’", "'")  # "Let’s" and "Let's" are one word
    for pattern, canonical in _ALIASES:
        plain = pattern.sub(canonical, plain)
    return " ".join(plain.split())


def _words(text: str) -> list[str]:
    """The words of `text`, lower case, a possessive "'s" left out ("FBI's" is "FBI")."""
    return [_POSSESSIVE_RE.sub("", w.casefold().replace("’", "'")) for w in _WORD_RE.findall(text)]


def _not_name(folded: str, negations: frozenset[str]) -> bool:
    return folded in ENGLISH_STOPWORDS or folded in negations or folded in _EXTRA_NOT_NAMES


def _capitalised(word: str, negations: frozenset[str]) -> bool:
    folded = word.casefold().replace("’", "'")
    if folded.endswith(_CONTRACTIONS):
        return False  # "DON'T", "We're": a contraction, not a name
    if word in _ACRONYMS_LIKE_WORDS:
        return True
    if folded in _MONTHS or _not_name(folded, negations):
        return False
    if word.isupper() and len(word) >= 3 and ordinary(folded):
        return False  # shouted, not named ("COURSE", "UPDATE"): `common_words`
    return (len(word) >= 2 and word.isupper()) or (word[:1].isupper() and len(word) >= 3)


def _opening_name(word: str) -> bool:
    """Whether a lone capitalised word opening a sentence is a name (see `_COUNTRIES`)."""
    base = re.sub(r"['’]s$", "", word)
    folded = base.casefold()
    return word.isupper() or base != word or folded[:5] in _COUNTRY_KEYS or folded in _DEMONYMS


def entities(text: str, negations: frozenset[str] = frozenset()) -> set[str]:
    """Names in `text` (aliases rewritten, see `_ALIASES`): runs of capitalised words and
    acronyms ("Joe Biden", "WHO"), less function words (and `negations`), month names
    (compared as numbers) and sentence openers that are ordinary words."""
    found: set[str] = set()
    for sentence in _SENTENCE_END_RE.split(_fold(text)):
        tokens = _NAME_OR_BREAK_RE.findall(sentence)
        run: list[str] = []
        opening = True  # the run starts the sentence
        for n, token in enumerate([*tokens, ""]):
            if token and token[0] not in _BREAK_STARTS and _capitalised(token, negations):
                if not run:  # an opening quotation mark or bracket still opens
                    opening = all(t in _RUN_BREAKS for t in tokens[:n])
                run.append(token)
                continue
            if run and (len(run) > 1 or not opening or _opening_name(run[0])):
                found.add(" ".join(run))
            run = []
    return found


def _parts(name: str, negations: frozenset[str]) -> list[str]:
    """The words of a name that identify it: "Obama-CoV-2" gives "obama", "cov"; titles
    ("President Biden") and a possessive "'s" are left out."""
    parts = re.split(r"[\s'’-]+", re.sub(r"['’]s\b", "", name.casefold()))
    return [
        p
        for n, p in enumerate(parts)
        if (len(p) >= 3 or (len(p) >= 2 and name.isupper()))
        and p not in _TITLES
        and (p not in _NAME_TITLES or n == len(parts) - 1)
        and (name.isupper() or not _not_name(p, negations))
    ]


def same_name_word(a: str, b: str) -> bool:
    """Whether two lower-case words write one name (see `_STEM` and `_DEMONYMS`)."""
    a, b = _DEMONYMS.get(a, a), _DEMONYMS.get(b, b)
    if a == b:
        return True
    shared = len(_common_prefix(a, b))
    if shared >= _STEM and len(a) - shared <= _ENDING and len(b) - shared <= _ENDING:
        return True
    return _transliterated(a, b)


_SKELETON_DROP = re.compile(r"[aeiouyhw]")


def _transliterated(a: str, b: str) -> bool:
    """Two romanisations of one name ("Saied"/"Saeed", "Riad"/"Riyad", "Mousa"/"Musa"): the
    same first letter and the same consonants once vowels, y, h and w are dropped and doubled
    letters merged ("Iran" and "Iraq" stay apart); names of four letters or more."""
    if a[:1] != b[:1] or min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 2:
        return False
    skeletons = [re.sub(r"(.)\1+", r"\1", _SKELETON_DROP.sub("", w)) for w in (a[1:], b[1:])]
    return skeletons[0] == skeletons[1] != ""


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _present(part: str, words: list[str]) -> bool:
    return any(same_name_word(part, w) for w in words)


def _initials(text: str) -> set[str]:
    """Acronyms the text spells out: "United States" gives "us", "Paris Saint-Germain"
    "psg"."""
    runs: set[str] = set()
    run: list[str] = []
    words = [w for name in _NAME_RE.findall(text) for w in name.split("-")]
    for word in [*words, ""]:
        if word[:1].isupper():
            run.append(word[0].casefold())
            continue
        for start in range(len(run)):
            for end in range(start + 2, len(run) + 1):
                runs.add("".join(run[start:end]))
        run = []
    return runs


def _missing(
    names: set[str], other: str, other_names: set[str], negations: frozenset[str]
) -> set[str]:
    """The name words of `names` that `other` lacks. A name counts word by word, so "Oxford
    Security Service" against "State Security Service" lacks "oxford"; a name with some of
    its words in `other` is there, shortened ("Trump" for "Donald Trump"), unless `other`
    names someone else under those words ("Riyad Salama" for "Riyad Mahrez"). An acronym and
    the words it stands for ("PSG", "Paris Saint-Germain") are the same name."""
    words = _words(other)
    missing: set[str] = set()
    for name in _unspelled(names, other):
        parts = _parts(name, negations)
        absent = [p for p in parts if not _present(p, words)]
        shared = [p for p in parts if p not in absent]
        if shared and not _named_otherwise(shared, parts, other_names, negations):
            continue
        missing.update(absent)
    return missing


def _unspelled(names: set[str], other: str) -> list[str]:
    """`names` less what `other` writes as an acronym or spells out: "UN" drops "United
    Nations" from "United Nations Human Rights Council", "United States" drops "US"."""
    acronyms = {w.casefold() for w in _NAME_RE.findall(other) if w.isupper()}
    initials = _initials(other)
    kept: list[str] = []
    for name in names:
        if name.isupper() and name.casefold() in initials:
            continue
        words = re.split(r"[\s-]+", name)
        covered: set[int] = set()
        for start in range(len(words)):
            for end in range(start + 2, len(words) + 1):
                if "".join(w[0] for w in words[start:end]).casefold() in acronyms:
                    covered.update(range(start, end))
        rest = [w for n, w in enumerate(words) if n not in covered]
        if rest:
            kept.append(" ".join(rest))
    return kept


def _named_otherwise(
    shared: list[str], parts: list[str], other_names: set[str], negations: frozenset[str]
) -> bool:
    """Whether a name of the other text shares words with this one and has words of its own
    ("Riyad Salama" against "Riyad Mahrez")."""
    for name in other_names:
        theirs = _parts(name, negations)
        if len(theirs) <= _SHORT_NAME:
            if any(_present(p, theirs) for p in shared) and any(
                not _present(p, parts) for p in theirs
            ):
                return True
            continue
        for word in shared:
            if word not in parts:
                continue
            mine_at = parts.index(word)
            theirs_at = next((n for n, p in enumerate(theirs) if same_name_word(word, p)), None)
            if theirs_at is None:
                continue
            # A long run around the same name ("Bernie Sanders Publicly Attacks Nominee", a
            # headline) names someone else only where the word beside the shared one
            # differs, on the same side.
            for step in (-1, 1):
                a, b = mine_at + step, theirs_at + step
                beside = 0 <= a < len(parts) and 0 <= b < len(theirs)
                if beside and not same_name_word(parts[a], theirs[b]):
                    return True
    return False


def _absent_words(names: set[str], other: str, negations: frozenset[str]) -> set[str]:
    """Every name word of `names` that `other` does not have (shortened names included)."""
    words = _words(other)
    return {
        p
        for name in _unspelled(names, other)
        for p in _parts(name, negations)
        if not _present(p, words)
    }


def _codes(text: str) -> set[str]:
    return {c for c in _CODE_RE.findall(_fold(text)) if c not in _LETTER_WORDS}


def _substituted(
    post: str, claim: str, named: set[str], their_named: set[str], negations: frozenset[str]
) -> str | None:
    """A name word of `named` that stands in the post where the claim, aligned word by word,
    has other words that are no name of its own (`their_named`, which would make it a swap of
    first names, "Pope Francis" for "Donald Trump"'s "Donald"): the post's change is who or
    what the claim is about."""
    ours, theirs = _words(post), _words(claim)
    our_words, their_words = _WORD_RE.findall(post), _WORD_RE.findall(claim)  # as written
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    if matcher.ratio() < _LINED_UP:
        return None
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 > _MAX_SUBSTITUTION or j2 - j1 > _MAX_SUBSTITUTION:
            continue
        if any(w in their_named or w in _PERSON_TITLES for w in theirs[j1:j2]):
            continue  # a swap of first names, or a title for one ("President" for "Joe")
        # A name added before a function word ("USA: 4-year-old boy" for "A 4-year-old
        # boy") is no substitution; a function word written as a name ("an Why prostitute")
        # still is.
        if all(w in ENGLISH_STOPWORDS for w in theirs[j1:j2]) and not any(
            their_words[j][:1].isupper() for j in range(max(j1, 1), j2)
        ):
            continue
        if _fuller_name(our_words, their_words, (i1, i2, j1, j2), negations):
            continue
        for word in ours[i1:i2]:
            if word in named:
                return f"{word!r} in place of {' '.join(theirs[j1:j2])!r}"
    return None


def _fuller_name(
    ours: list[str], theirs: list[str], span: tuple[int, int, int, int], negations: frozenset[str]
) -> bool:
    """Whether our words `ours[i1:i2]` put in place of `theirs[j1:j2]` (words as written) are a
    first name before a name both texts have, where the other text has no name of its own:
    "Donald Trump said" against "FULL CONTEXT: Trump told"."""
    _, i2, j1, j2 = span
    if i2 >= len(ours) or j2 >= len(theirs) or ours[i2].casefold() != theirs[j2].casefold():
        return False
    if not ours[i2][:1].isupper():
        return False
    # Any capital in the other text's words ("Black Lives" for "October") makes it a swap;
    # shouted ordinary words ("FULL CONTEXT") do not.
    return not any(
        theirs[j][:1].isupper() and not _shouted_word(theirs[j], negations) for j in range(j1, j2)
    )


def _shouted_word(word: str, negations: frozenset[str]) -> bool:
    return word.isupper() and (_not_name(word.casefold(), negations) or ordinary(word.casefold()))


def _recapitalised(post: str, claim: str, negations: frozenset[str]) -> str | None:
    """In a near-verbatim copy (`_VERBATIM` of the words aligned), one capitalised word put in
    place of another capitalised word that is not the same name: a sentence opener is not
    taken for a name by `entities`, but a copy whose one change is "Pfizer." for "Yes." or
    "Reuters in general" for "Headaches in general" is about something else."""
    ours, theirs = _WORD_RE.findall(post), _WORD_RE.findall(claim)
    matcher = difflib.SequenceMatcher(
        None, [w.casefold() for w in ours], [w.casefold() for w in theirs], autojunk=False
    )
    opcodes = matcher.get_opcodes()
    # One word swapped and all else equal is a copy however short ("Obama said this.").
    one_swap = [op[0] for op in opcodes if op[0] != "equal"] == ["replace"]
    if len(ours) < _VERBATIM_MIN_WORDS or (matcher.ratio() < _VERBATIM and not one_swap):
        return None
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
            continue
        mine, other = ours[i1], theirs[j1]
        if not (mine[:1].isupper() and other[:1].isupper()):
            continue
        if i2 < len(ours) and ours[i2][:1].isupper():
            continue  # a first name or title before the same name ("President Biden")
        if _not_name(mine.casefold(), negations) or same_name_word(
            mine.casefold(), other.casefold()
        ):
            continue
        return f"{mine!r} in place of {other!r}"
    return None


_TITLE_CASE = 0.75  # share of capitalised words that makes a text a headline in Title Case
_TITLE_MIN_WORDS = 6


def _decased(text: str, other: str) -> str:
    """A headline in Title Case ("SeaWorld Employees Place Orcas In Plastic Bags") with only
    its names capitalised: acronyms and the words `other` capitalises too. Otherwise every
    word of it would be a name the other text lacks."""
    words = _WORD_RE.findall(text)
    if len(words) < _TITLE_MIN_WORDS:
        return text
    if sum(w[:1].isupper() for w in words) < _TITLE_CASE * len(words):
        return text
    capitalised = {w for w in _WORD_RE.findall(other) if w[:1].isupper()}

    def lower(match: re.Match[str]) -> str:
        word = match.group(0)
        keep = word in capitalised or (word.isupper() and 2 <= len(word) <= 5)
        return word if keep else word.lower()

    return _WORD_RE.sub(lower, text)


def entity_difference(post: str, claim: str, negations: frozenset[str]) -> str | None:
    """How the post names someone or something else than the claim, or None (see the module
    doc); `negations` are words never taken for names."""
    post, claim = _decased(post, claim), _decased(claim, post)
    post_f, claim_f = _fold(post), _fold(claim)
    post_names, claim_names = entities(post, negations), entities(claim, negations)
    in_post = _missing(post_names, claim_f, claim_names, negations)
    in_claim = _missing(claim_names, post_f, post_names, negations)
    if in_post and in_claim:
        return f"post names {', '.join(sorted(in_post))}; fact-checked claim names " + ", ".join(
            sorted(in_claim)
        )
    absent_post = _absent_words(post_names, claim_f, negations)
    absent_claim = _absent_words(claim_names, post_f, negations)
    for ours, theirs, named, their_named, side in (
        (post_f, claim_f, absent_post, absent_claim, "post"),
        (claim_f, post_f, absent_claim, absent_post, "fact-checked claim"),
    ):
        found = _substituted(ours, theirs, named, their_named, negations) if named else None
        if found:
            return f"{side} names {found}"
    found = _recapitalised(post_f, claim_f, negations)
    if found:
        return f"post names {found}"
    ours_codes, theirs_codes = _codes(post), _codes(claim)
    if ours_codes - theirs_codes and theirs_codes - ours_codes:
        return f"post says {'/'.join(sorted(ours_codes))}, fact-checked claim says " + "/".join(
            sorted(theirs_codes)
        )
    return None
