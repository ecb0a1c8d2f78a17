"""When is a fact-check too old to answer a post? Evergreen hoaxes against time-bound claims.

Measured on the CLEF CheckThat! 2022 Task 2A train tweets (bench/claim_matching_eval.py: the
age of the gold Snopes fact-check at the tweet's own date, read from its embed signature):
of 970 dated pairs, 72 % of the tweets came before the fact-check (it was written because of
them), the median age is -2 days, 1.6 % are over 30 days old and 0.1 % over two years. The
old ones are recurring hoaxes: the same "fake Melania" video a year on, George Soros "a Nazi"
for the third time, the candy-cane legend sixteen years after its fact-check. A flat two-year
limit would answer none of them today (the collection ends in 2022), and some claims really
do expire: this week's case count, an election result, "currently closed".

So a claim is **time-bound** when its wording ties it to a moment (`time_marker`): relative
dates ("this week", "yesterday", "currently", "so far"), a named election or vote, a count or
rate ("cases", "death toll", "approval rating") or anything "as of" a date. A claim about a
dated event ("In November 2012, Trump tweeted …") is not: what happened then stays true or
false, and such posts recur. A time-bound
fact-check is possibly outdated after `ClaimsConfig.time_bound_max_age_days`; any other after
`max_age_days` (the evergreen limit); one without a date always.
"""

from __future__ import annotations

import re

from pipeline.config import ClaimsConfig

_MARKERS = re.compile(
    r"\b(?:this|last|next|past) (?:week|weekend|month|year|morning|night|evening|friday|monday"
    r"|tuesday|wednesday|thursday|saturday|sunday|season|term)\b"
    r"|\b(?:today|tonight|yesterday|tomorrow|currently|right now|so far|to date|as of"
    r"|breaking|upcoming|this fall|this spring|this summer|this winter|days? ago|weeks? ago"
    r"|hours? ago|latest|ongoing|at the moment|still underway|live now)\b"
    r"|\b(?:election|elections|primary|primaries|ballots?|polls?|polling|caucus(?:es)?"
    r"|referendum|runoff|midterms?|inauguration|impeachment vote|vote count|exit polls?)\b"
    r"|\b(?:cases|deaths|death toll|infections|hospitali[sz]ations|unemployment rate"
    r"|approval rating|stock market|gas prices|inflation rate)\b",
    re.IGNORECASE,
)


def time_marker(text: str) -> str | None:
    """The first wording of `text` that ties it to a moment, or None (an evergreen claim)."""
    found = _MARKERS.search(text)
    return found.group(0).casefold() if found else None


def possibly_outdated(age_days: int | None, claim_text: str, cfg: ClaimsConfig) -> bool:
    """Whether a fact-check `age_days` old (None: undated) is too old to answer a post by
    itself: time-bound claims expire after `cfg.time_bound_max_age_days`, evergreen ones after
    `cfg.max_age_days`."""
    if age_days is None:
        return True
    limit = cfg.time_bound_max_age_days if time_marker(claim_text) else cfg.max_age_days
    return age_days > limit
