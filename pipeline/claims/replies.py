"""Templated replies citing a matched fact-check, for the no-LLM answer to a known claim.

The wording per language is `pipeline/data/claim_replies.toml`; the platform's length rules
come from `pipeline.reply.formats`, and the guard still checks the reply chosen.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources

from pipeline.claims.index import ClaimMatch, ClaimRecord, ClaimSource, cited_url
from pipeline.claims.ratings import Rating
from pipeline.config import GuardConfig
from pipeline.records import Platform
from pipeline.reply.formats import reply_format
from pipeline.web.domains import registrable_domain

_DOMAIN_NAME_RE = re.compile(r"^[\w-]+(\.[\w-]+)+$")


def display_publisher(record: ClaimRecord) -> str:
    """A publisher name safe to print: a domain-like name ("snopes.com") would be linked by the
    platform as a URL that is not evidence, so it becomes its main label ("Snopes")."""
    name = " ".join(record.publisher_name.replace("@", " ").split())
    if _DOMAIN_NAME_RE.match(name) or not name:
        domain = registrable_domain(name or record.review_url) or ""
        label = domain.split(".", 1)[0]
        name = label[:1].upper() + label[1:] if label else ""
    name = name.replace(".", " ")
    return name[:40].strip()


@cache
def _reply_templates() -> dict[str, dict[str, str]]:
    source = resources.files("pipeline.data").joinpath("claim_replies.toml")
    return tomllib.loads(source.read_text(encoding="utf-8"))


def template_replies(match: ClaimMatch, lang: str | None = None) -> list[str]:
    """Candidate replies citing the fact-check, most informative first, in the post's language
    when `pipeline/data/claim_replies.toml` has it, else in English."""
    templates = _reply_templates()
    t = templates.get((lang or "en").split("-")[0].lower(), templates["en"])
    record = match.record
    url = cited_url(record)
    word = t["false"] if record.rating is Rating.FALSE else t["misleading"]
    if record.source is ClaimSource.APPROVED_ANSWER:
        return [t["ours"].format(word=word, url=url), t["ours_short"].format(word=word, url=url)]
    publisher = display_publisher(record)
    texts = [t["without_publisher"].format(word=word, url=url)]
    if publisher:
        texts.insert(0, t["with_publisher"].format(publisher=publisher, word=word, url=url))
    return texts


def templated_reply(
    match: ClaimMatch, platform: Platform, cfg: GuardConfig, lang: str | None = None
) -> str:
    """The first candidate reply that fits the platform's length rule (the guard still
    checks it; the last candidate is returned when none fits, for the guard to reject)."""
    candidates = template_replies(match, lang)
    form = reply_format(platform)
    for text in candidates:
        if form.fits(text, cfg):
            return text
    return candidates[-1]
