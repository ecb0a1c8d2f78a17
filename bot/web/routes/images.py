"""The pictures of a request's post, for moderators: served from our own stored copy by sha256,
never hot-linked from the original URL (which would tell the poster's server who is looking and
let it swap the picture after the check), and what the check found in each (OCR text,
near-duplicate and fact-check matches) for the item page.

The copy is the re-encoded, EXIF-free JPEG `pipeline.images.reader` keeps (`images.copy_side`); its
Content-Type comes from the bytes' own magic (`pipeline.images.intake.sniff`), never from a
stored or guessed name, and it is sent with `Content-Security-Policy: default-src 'none'` and
`nosniff`, so even a hostile file opened on its own runs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Depends
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from bot.web.auth import require_user
from bot.web.context import Moderator
from pipeline.images.intake import ImageUnreadable, sniff
from storage.db import Session
from storage.images import SqlImageStore, stored_copies

router = APIRouter(dependencies=[Depends(require_user)])

MEDIA_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "GIF": "image/gif", "WEBP": "image/webp"}
IMAGE_POLICY = "default-src 'none'"
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ImageMatchView:
    source: str
    distance: int
    fact_check_url: str | None
    rating: str | None
    similarity: float | None
    possible: bool


@dataclass(frozen=True)
class ImageView:
    """One image of the checked post as the item page shows it."""

    label: str  # "post image 1", "quoted post image 2"
    source: str  # the original URL or inbox path, shown as text only
    sha256: str | None
    shown: bool  # our copy is stored: the page can show it
    ocr_text: str
    described_by: str
    error: str | None
    matches: list[ImageMatchView] = field(default_factory=list)
    reverse_search: str = ""
    # What the configured recognition service named (its data, with its score) and its status.
    recognition: str = ""
    recognised: list[str] = field(default_factory=list)


def image_views(session: Session, trace: dict[str, Any] | None) -> list[ImageView]:
    """The images of a decision's trace (`ImageReport`s as JSON), each with whether our copy
    of it is stored."""
    reports = [r for r in (trace or {}).get("images") or [] if isinstance(r, dict)]
    hashes = {r["sha256"] for r in reports if isinstance(r.get("sha256"), str)}
    stored = stored_copies(session, hashes)
    views = []
    for report in reports:
        sha = report.get("sha256") if isinstance(report.get("sha256"), str) else None
        lines = report.get("ocr") or []
        views.append(
            ImageView(
                label=f"{report.get('owner', 'post')} image {report.get('number', '?')}",
                source=str(report.get("source", "")),
                sha256=sha,
                shown=sha in stored,
                ocr_text="\n".join(str(line.get("text", "")) for line in lines),
                described_by=str(report.get("described_by", "none")),
                error=report.get("error"),
                matches=[match_view(m) for m in report.get("matches") or [] if isinstance(m, dict)],
                reverse_search=str(report.get("reverse_search", "")),
                recognition=str(report.get("recognition", "")),
                recognised=[_recognised(r) for r in report.get("recognised") or []],
            )
        )
    return views


def _recognised(raw: Any) -> str:
    if not isinstance(raw, dict):
        return ""
    score = raw.get("score")
    shown = f"score {score:.2f}" if isinstance(score, int | float) else "unscored"
    return f"{raw.get('kind', '')} {raw.get('name', '')!s} ({shown}, {raw.get('service', '')})"


def match_view(raw: dict[str, Any]) -> ImageMatchView:
    return ImageMatchView(
        source=str(raw.get("source", "")),
        distance=int(raw.get("distance", 64)),
        fact_check_url=raw.get("fact_check_url"),
        rating=raw.get("rating"),
        similarity=raw.get("similarity"),
        possible=bool(raw.get("possible", False)),
    )


@router.get("/images/{sha256}")
def image(me: Moderator, sha256: str) -> Response:
    """Our stored copy of an image, by the sha256 of the bytes first received."""
    if not _SHA256.fullmatch(sha256):
        raise StarletteHTTPException(404, "No such image.")
    data = SqlImageStore(me.db).content(sha256)
    if data is None:
        raise StarletteHTTPException(404, "No stored copy of this image.")
    try:
        media_type = MEDIA_TYPES[sniff(data)]
    except ImageUnreadable as exc:  # not one of our copies: never served as anything
        raise StarletteHTTPException(404, "No stored copy of this image.") from exc
    return Response(
        content=data,
        media_type=media_type,
        headers={
            "Content-Security-Policy": IMAGE_POLICY,
            # Addressed by content: the bytes behind a name never change.
            "Cache-Control": "private, max-age=86400, immutable",
            "Content-Disposition": "inline",
        },
    )
