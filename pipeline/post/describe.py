"""Turn a post into the text the other stages read: its own text, the post it quotes or
answers, its links, and its images as text.

A post is written by a stranger and can be of any size (a 10 MB post once became one 10 MB LLM
request). `cap_post` cuts what a check reads of it to the limits of `LLMConfig` before any
stage sees it, and says what it cut, for the decision's reasons.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import py3langid

from pipeline.config import LLMConfig
from pipeline.llm.prompts import cut_text, quote_untrusted
from pipeline.records import Image, Post

MAX_LINKS = 10  # links of a post shown to the model
MAX_IMAGES = 4  # images of a post described and shown (X and Bluesky allow 4)


def _cut(text: str, limit: int, what: str, notes: list[str]) -> str:
    cut = cut_text(text, limit)
    if cut != text:
        notes.append(f"{what} cut to {limit:,} of {len(text):,} characters for the LLM prompts")
    return cut


def _cap_one(post: Post, cfg: LLMConfig, name: str, notes: list[str]) -> Post:
    item = cfg.max_item_chars
    text = _cut(post.text, cfg.max_post_chars, f"{name} text", notes)
    author = _cut(post.author, item, f"{name} author", notes)
    images: list[Image] = []
    for number, image in enumerate(post.images[:MAX_IMAGES], 1):
        update: dict[str, str | None] = {}
        for field in ("alt_text", "description"):
            value = getattr(image, field)
            if value:
                label = f"{name} image {number} {field.replace('_', ' ')}"
                update[field] = _cut(value, item, label, notes)
        images.append(image.model_copy(update=update))
    if len(post.images) > MAX_IMAGES:
        notes.append(
            f"{name}: {len(post.images) - MAX_IMAGES} image(s) past the first {MAX_IMAGES} left "
            "out of the LLM prompts"
        )
    videos = [
        video.model_copy(
            update={
                field: _cut(value, item, f"{name} video {n} {field}", notes)
                for field in ("description", "text")
                if (value := getattr(video, field))
            }
        )
        for n, video in enumerate(post.videos[:MAX_IMAGES], 1)
    ]
    links = [link for link in post.links if len(link) <= item][:MAX_LINKS]
    if len(links) < len(post.links):
        notes.append(f"{name}: {len(post.links) - len(links)} link(s) left out of the LLM prompts")
    return post.model_copy(
        update={
            "text": text,
            "author": author,
            "images": images,
            "videos": videos,
            "links": links,
        }
    )


def cap_post(post: Post, cfg: LLMConfig) -> tuple[Post, list[str]]:
    """A copy of `post` within the prompt limits of `cfg`, and one line per thing cut: its
    text and the text of the post it quotes or answers (`max_post_chars` each); each image's
    alt text and description, link and author name (`max_item_chars`); images past the
    first `MAX_IMAGES` and links past the first `MAX_LINKS` are left out. Posts nested
    deeper than the quoted and parent post are never shown to the model and are dropped."""
    notes: list[str] = []
    capped = _cap_one(post, cfg, "post", notes)
    nested = {
        relation: _cap_one(other, cfg, f"{relation} post", notes).model_copy(
            update={"quoted": None, "parent": None}
        )
        for relation in ("quoted", "parent")
        if (other := getattr(post, relation)) is not None
    }
    capped = capped.model_copy(update=nested)
    return capped, notes


def prompt_time(when: datetime) -> str:
    """`when` to the minute in UTC (a time without offset is taken as UTC): what the models
    need of it in fewer tokens than ISO 8601's seconds and offset."""
    utc = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return f"{utc:%Y-%m-%d %H:%M} UTC"


def post_block(post: Post) -> str:
    """The post as one untrusted data block, with its context posts nested inside."""
    lines = [f"author: {post.author}", f"time: {prompt_time(post.created_at)}", "", post.text]
    for link in post.links:
        lines.append(f"link: {link}")
    for i, image in enumerate(post.images, 1):
        described = image.description or image.alt_text
        if described:
            lines.append(f"image {i}: {described}")
    for i, video in enumerate(post.videos, 1):
        if video.description or video.alt_text:
            lines.append(f"video {i}: {video.description or video.alt_text}")
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
    texts.extend(video.text for video in post.videos if video.text)
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
    return any(image.description or image.alt_text for image in post.images) or any(
        video.text for video in post.videos
    )


def detect_language(post: Post) -> str | None:
    """ISO 639-1 code of the post's language, or None for text too short to tell."""
    text = post.text.strip()
    if len(text.split()) < 3:
        return None
    lang, _score = py3langid.classify(text)
    return str(lang)
