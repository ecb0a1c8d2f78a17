"""Images as text: what an image says (its text, transcribed), what it shows, and who is in
it, from a vision-capable model, so that every later stage can treat the post as text.

Local files (the local adapter's inbox) are sent inline as `data:` URLs, and only when their
bytes are really an image (PNG, JPEG, GIF or WebP), so an inbox entry cannot smuggle another
file to the model. Platform images are passed by their https URL: the model's server fetches
them, as the OpenAI API expects.
"""

from __future__ import annotations

import base64
from pathlib import Path

from pydantic import BaseModel

from pipeline.llm import CallLedger, LLMClient
from pipeline.prompts import IMAGE_SYSTEM, quote_untrusted
from pipeline.records import Image, Post

MAX_IMAGE_BYTES = 5_000_000
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class ImageUnreadable(Exception):
    """The image could not be turned into something a model can see."""


class ImageAnswer(BaseModel):
    text_in_image: str  # transcribed exactly; empty when there is none
    caption: str
    people: list[str]  # clearly identifiable public figures or organisations


def image_url(source: str) -> str:
    if source.startswith(("https://", "http://")):
        return source
    path = Path(source)
    try:
        if not path.exists():
            raise ImageUnreadable(f"{source}: no such file")
        if not path.is_file():  # a directory, or a device such as /dev/zero that never ends
            raise ImageUnreadable(f"{source}: not a file")
        with path.open("rb") as handle:
            data = handle.read(MAX_IMAGE_BYTES + 1)  # the size on disk can change or lie
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise ImageUnreadable(f"{source}: {getattr(exc, 'strerror', None) or exc}") from exc
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageUnreadable(f"{source}: over {MAX_IMAGE_BYTES} bytes")
    mime = _sniff(data)
    if mime is None:
        raise ImageUnreadable(f"{source}: not a PNG, JPEG, GIF or WebP image")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _sniff(data: bytes) -> str | None:
    for signature, mime in _SIGNATURES:
        if data.startswith(signature):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def describe(image: Image, context: str, llm: LLMClient, ledger: CallLedger) -> str:
    answer = llm.structured(
        "describe_image",
        system=IMAGE_SYSTEM,
        user="The image is attached to this post:\n" + context,
        schema=ImageAnswer,
        ledger=ledger,
        images=[image_url(image.source)],
    )
    parts = [answer.caption.strip()]
    if answer.text_in_image.strip():
        parts.append(f'Text in the image: "{answer.text_in_image.strip()}"')
    if answer.people:
        parts.append("Shows: " + ", ".join(p.strip() for p in answer.people if p.strip()))
    if image.alt_text:
        parts.append(f"Alt text: {image.alt_text}")
    return ". ".join(p for p in parts if p)


def describe_post_images(post: Post, llm: LLMClient, ledger: CallLedger) -> list[str]:
    """Fill in the description of every image of the post (and of the post it quotes) that
    has none. Returns one problem line per image that could not be read; model failures
    raise (they are technical failures of the request)."""
    problems: list[str] = []
    for owner in (post, post.quoted):
        if owner is None:
            continue
        context = quote_untrusted("post", owner.text)
        for number, image in enumerate(owner.images, 1):
            if image.description:
                continue
            try:
                image.description = describe(image, context, llm, ledger)
            except ImageUnreadable as exc:
                problems.append(f"image {number} not described: {exc}")
    return problems
