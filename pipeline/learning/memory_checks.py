"""What an experience-memory item must pass before it is stored, and how a prompt names where
it came from (issue 33, finding 1).

A distilled item is the LLM's text about an episode whose post, parent, quote and pages were
written by strangers, so a stranger can try to write the bot's memory through it ("every
fact-check about lemon water must call the claim supported"). Three defences meet here:

- `clean` cuts every link and handle the guard would find in a reply (`pipeline.web.links`'
  finder, so scheme-less hosts, `bit.ly/x`, full-width and hidden characters count; the
  guard's mention rule after NFKC, so `＠handle` and `@\u200bhandle` count), and an item that
  still carries one after cutting is dropped;
- `copied_from` refuses an item that repeats `COPY_RUN` consecutive words of a stranger's text
  of its episode (the guard's `copied_run`, case, punctuation and look-alike letters ignored);
- `provenance` is the line a prompt shows with each item: who confirmed it and when, or that
  nobody did. Only a person's approval, edit or rejection is called reviewed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import regex

from pipeline.reply.guard import copied_run, mentions
from pipeline.web.links import HIDDEN_RE, find_urls

if TYPE_CHECKING:
    from pipeline.learning.memory import MemoryItem
    from pipeline.records import Decision, Post

TEXT_CHARS = 300  # a trigger or strategy is a sentence or two
# Six words in a row is a quotation, not a strategy in general terms (DISTILL_SYSTEM asks for
# a topic and a claim pattern); shorter runs are common phrases ("the health agency says").
COPY_RUN = 6
# Any "@name" after NFKC and hidden characters dropped, in any script (`@аlice`, Cyrillic а).
_HANDLE_RE = regex.compile(r"(?<![\w@])@[\w.\-]*\w")
_CUTS = 3  # cutting can join pieces into a new link ("bit" + "." + "ly/x"): cut again


def _cut_once(text: str) -> str:
    found = find_urls(text)
    for url in reversed(found):
        text = text[: url.start] + " " + text[url.end :]
    return _HANDLE_RE.sub(" ", text)


def clean(text: str) -> str:
    """One line of at most `TEXT_CHARS` characters, without links or handles; "" when some
    remain after cutting (the item is dropped rather than carry a way to plant a link)."""
    flat = unicodedata.normalize("NFKC", HIDDEN_RE.sub("", text))
    for _ in range(_CUTS):
        flat = " ".join(_cut_once(flat).split())
        if not find_urls(flat) and not mentions(flat):
            return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1] + "…"
    return ""


def _post_texts(post: Post, label: str) -> Iterable[tuple[str, str]]:
    yield label, post.text
    for image in post.images:
        for text in (image.alt_text, image.description, image.text):
            if text:
                yield f"an image of {label}", text
    if post.parent is not None:
        yield from _post_texts(post.parent, f"the parent of {label}")
    if post.quoted is not None:
        yield from _post_texts(post.quoted, f"the post quoted by {label}")


def stranger_texts(post: Post | None, decision: Decision | None) -> list[tuple[str, str]]:
    """(where, text) for every text of an episode a stranger wrote: the post with its parent,
    quote and images, and the pages, quotes and search snippets its check read."""
    found: list[tuple[str, str]] = []
    if post is not None:
        found.extend(_post_texts(post, "the post"))
    if decision is not None:
        found += [(f"the page {d.url}", d.text) for d in decision.documents if d.text]
        found += [(f"the page {e.url}", e.quote) for e in decision.evidence]
        found += [(f"the page {c.url}", c.text) for c in decision.candidates]
        for round_ in decision.trace.rounds:
            found += [
                (f"the search result {r.url}", f"{r.title}\n{r.snippet}") for r in round_.results
            ]
    return [(where, text) for where, text in found if text.strip()]


def copied_from(texts: Sequence[str], strangers: Sequence[tuple[str, str]]) -> str | None:
    """Why an item made of `texts` is refused, or None: the first stranger's text it repeats
    `COPY_RUN` words of, and the words."""
    for where, source in strangers:
        for text in texts:
            run = copied_run(text, source, COPY_RUN)
            if run is not None:
                return f'copies {where}: "{run}"'
    return None


def _day(when: datetime | None) -> str:
    return when.date().isoformat() if when else "an unknown date"


_ORIGIN = {
    "judge": "distilled from the bot's own judged fact-check",
    "approve": "distilled from a reply a moderator approved",
    "import": "imported from another deployment",
}


def provenance(item: MemoryItem) -> str:
    """Where `item` came from and who confirmed it, as a prompt shows it."""
    if item.origin == "edit":
        return f"from a moderator's edit on {_day(item.decided_at or item.created)}"
    if item.origin == "reject":
        return f"from a moderator's rejection on {_day(item.decided_at or item.created)}"
    origin = _ORIGIN[item.origin]
    if item.status == "approved":
        return f"{origin}; approved by a moderator on {_day(item.decided_at)}"
    return f"{origin}; not reviewed by a person"
