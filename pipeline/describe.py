"""Turn a post into the text the other stages read: its own text, the post it quotes or
answers, its links, and its images as text."""

from __future__ import annotations

import re

import py3langid

from pipeline.prompts import quote_untrusted
from pipeline.records import Post


def post_block(post: Post) -> str:
    """The post as one untrusted data block, with its context posts nested inside."""
    lines = [f"author: {post.author}", f"time: {post.created_at.isoformat()}", "", post.text]
    for link in post.links:
        lines.append(f"link: {link}")
    for i, image in enumerate(post.images, 1):
        described = image.description or image.alt_text
        if described:
            lines.append(f"image {i}: {described}")
    body = "\n".join(lines)
    for relation, other in (("quoted", post.quoted), ("parent", post.parent)):
        if other is not None:
            body += "\n\n" + quote_untrusted(
                "post", f"author: {other.author}\n\n{other.text}", relation=relation
            )
    return quote_untrusted("post", body)


def query_texts(post: Post, claims: list[str]) -> list[str]:
    """What relevance is measured against: the post itself and each claim taken from it."""
    texts = [post.text]
    if post.quoted is not None:
        texts.append(post.quoted.text)
    texts.extend(image.description for image in post.images if image.description)
    texts.extend(claims)
    return [t for t in texts if t and t.strip()]


# Links, @handles and the signs of hashtags and cashtags say nothing a search engine can use.
_QUERY_NOISE = re.compile(r"https?://\S+|\bwww\.\S+|@[\w.\-]+|[#$]")
# Google reads the first 32 words of a query and other engines are stricter; a post's opening
# words carry its claim.
POST_QUERY_WORDS = 24


def post_query(post: Post) -> str | None:
    """The post's own words as a search query (fact-checkers quote the claims they check), or
    None when fewer than 3 words are left."""
    words = [w for w in _QUERY_NOISE.sub(" ", post.text).split() if any(c.isalnum() for c in w)]
    if len(words) < 3:
        return None
    return " ".join(words[:POST_QUERY_WORDS])


def has_image_text(post: Post) -> bool:
    return any(image.description or image.alt_text for image in post.images)


def detect_language(post: Post) -> str | None:
    """ISO 639-1 code of the post's language, or None for text too short to tell."""
    text = post.text.strip()
    if len(text.split()) < 3:
        return None
    lang, _score = py3langid.classify(text)
    return str(lang)
