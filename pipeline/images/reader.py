"""Images as text: each image of a post is taken in safely, read offline (OCR), compared with the
images seen before (pHash), and described, so that every later stage can treat it as text.

Per image (`ImageReader.read_post`):

1. intake (`pipeline.images.intake`): URL through the SSRF-guarded fetcher or a file from the
   inbox folder, decoded only as JPEG/PNG/GIF/WebP, bombs refused, EXIF applied and dropped;
2. near duplicates (`pipeline.images.phash`): a repost of an image a fact-check carries becomes a
   known-claim match; when pHash finds nothing, the learned embedding
   (`pipeline.images.embedding`) looks past crops, caption bars and borders, and what it finds is
   a possible match for moderators (a known claim only with `embedding_auto_match`); every
   image is remembered once by the sha256 of its bytes, with its embedding and our own copy;
3. OCR (`pipeline.images.ocr`), offline, lines with their scores and boxes kept in the trace;
4. description: with an LLM endpoint, a vision call on our own JPEG copy (<= `vision_side` px,
   detail "low": the model's server never fetches a stranger's URL, and EXIF never leaves);
   without one, the OCR text alone. `ImageReport.described_by` says which. Places and people
   are named only by a configured recognition service (`pipeline.images.recognition`), quoted as
   its data with its scores; never by the vision model's guess.

An image that cannot be taken in is a problem line, not a failure of the check; a model failure
of the vision call raises (a technical failure of the request).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ValidationError
from rapidfuzz import fuzz

from pipeline.claims.index import ClaimMatch, ClaimRecord, MatchStrength
from pipeline.config import ClaimsConfig, ImagesConfig
from pipeline.images.embedding import ImageEmbedder, to_bytes
from pipeline.images.intake import ImageUnreadable, IntakeImage, take_in
from pipeline.images.ocr import OcrEngine
from pipeline.images.phash import ImageStore, SeenImage, distance, phash
from pipeline.images.recognition import (
    KEY_VARIABLE,
    ImageRecognizer,
    above_floors,
    recognition_line,
)
from pipeline.images.records import DescriptionSource, ImageMatch, ImageReport
from pipeline.images.reverse_search import ReverseImageSearch, provenance_note, vetted
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.llm.prompts import IMAGE_SYSTEM, cut_text, quote_untrusted
from pipeline.records import Image, Post
from pipeline.relevance.lexical import terms
from pipeline.search.base import SearchError
from pipeline.sources.credibility import PublisherTable
from pipeline.web.fetch import Fetcher

if TYPE_CHECKING:
    from pipeline.shared_parts import SharedParts

__all__ = [
    "ImageAnswer",
    "ImageReader",
    "ImageStageResult",
    "ImageUnreadable",
    "fact_check_image",
    "merge_matches",
    "possible_match_notes",
    "text_agreement",
    "unreadable_only",
]


class ImageAnswer(BaseModel):
    text_in_image: str  # transcribed exactly; empty when there is none
    caption: str
    # Asked for by the prompt but not used: who is in a picture comes only from a configured
    # recognition service, never from a general model's guess (issue 13).
    people: list[str]


@dataclass
class ImageStageResult:
    reports: list[ImageReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line per image not read
    notes: list[str] = field(default_factory=list)  # provenance found by reverse search
    # Images a fact-check carries, matched by pHash: known claims like a matched text.
    claim_matches: list[ClaimMatch] = field(default_factory=list)


def _readable_chars(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def vision_url(taken: IntakeImage, cfg: ImagesConfig) -> str:
    """Our own JPEG copy of the image as a `data:` URL, longer side <= `cfg.vision_side`."""
    data = taken.jpeg(cfg.vision_side)
    return "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")


class ImageReader:
    """Reads the images of posts; built per check from the long-lived shared parts."""

    def __init__(
        self,
        cfg: ImagesConfig,
        fetcher: Fetcher,
        *,
        store: ImageStore | None = None,
        ocr: OcrEngine | None = None,
        llm: LLMClient | None = None,
        claims_cfg: ClaimsConfig | None = None,
        max_chars: int = 1000,
        reverse: ReverseImageSearch | None = None,
        publishers: PublisherTable | None = None,
        embedder: ImageEmbedder | None = None,
        recognizer: ImageRecognizer | None = None,
    ) -> None:
        self.cfg = cfg
        self.fetcher = fetcher
        self.store = store
        self.ocr = ocr
        self.llm = llm if llm is not None and llm.configured else None
        self.claims_cfg = claims_cfg or ClaimsConfig()
        # A description is cut like any untrusted item: an image can carry a whole article.
        self.max_chars = max_chars
        self.reverse = reverse
        self.publishers = publishers
        self.embedder = embedder if cfg.embedding else None
        self.recognizer = recognizer

    @classmethod
    def from_shared(cls, shared: SharedParts) -> ImageReader:
        return cls(
            shared.cfg.images,
            shared.fetcher,
            store=shared.images,
            ocr=shared.ocr,
            llm=shared.llm,
            claims_cfg=shared.claim_index.cfg if shared.claim_index else shared.cfg.claims,
            max_chars=shared.cfg.llm.max_item_chars,
            reverse=shared.reverse_images,
            publishers=shared.publishers,
            embedder=shared.image_embedder,
            recognizer=shared.image_recognizer,
        )

    def read_post(self, post: Post, ledger: CallLedger, as_of: datetime) -> ImageStageResult:
        """Describe every image of `post` (and of the post it quotes) that has no description
        yet, in place, and report on each."""
        result = ImageStageResult()
        for owner, name in ((post, "post"), (post.quoted, "quoted post")):
            if owner is None:
                continue
            context = quote_untrusted("post", owner.text)
            for number, image in enumerate(owner.images, 1):
                if image.description:
                    continue
                report = ImageReport(owner=name, number=number, source=image.source)
                result.reports.append(report)
                self._read_one(image, report, context, ledger, as_of, result)
                if report.error is not None:
                    label = f"image {number}" if name == "post" else f"{name} image {number}"
                    result.problems.append(f"{label} not described: {report.error}")
        return result

    def _read_one(
        self,
        image: Image,
        report: ImageReport,
        context: str,
        ledger: CallLedger,
        as_of: datetime,
        result: ImageStageResult,
    ) -> None:
        try:
            taken = take_in(image.source, self.fetcher, self.cfg)
        except ImageUnreadable as exc:
            report.error = str(exc)
            return
        report.sha256, report.format = taken.sha256, taken.format
        report.width, report.height = taken.width, taken.height
        report.phash = phash(taken.image, self.cfg.hash_side)
        if self.ocr is not None and self.cfg.ocr:
            read = self.ocr.read(taken.image)
            report.ocr, report.ocr_seconds, report.ocr_error = read.lines, read.seconds, read.error
        if self.store is not None:  # after OCR: whether it has text decides the second stage
            result.claim_matches.extend(self._near_duplicates(taken, report, as_of))
            result.notes.extend(possible_match_notes(report))
        note = self._reverse_search(image.source, report, as_of)
        if note is not None:
            result.notes.append(note)
        recognised = self._recognise(taken, report)
        if report.recognition.startswith("failed"):
            label = f"{report.owner} image {report.number}"
            result.notes.append(f"{label}: recognition {report.recognition}")
        ocr_text = report.ocr_text
        if ocr_text:
            image.text = cut_text(_one_line(ocr_text), self.max_chars)
        parts: list[str] = []
        if self.llm is not None:
            answer = self.llm.structured(
                "describe_image",
                system=IMAGE_SYSTEM,
                user="The image is attached to this post:\n" + context,
                schema=ImageAnswer,
                ledger=ledger,
                images=[vision_url(taken, self.cfg)],
            )
            report.described_by = DescriptionSource.VISION
            parts.append(answer.caption.strip())
            seen_text = answer.text_in_image.strip() or ocr_text
            if seen_text:
                parts.append(f'Text in the image: "{_one_line(seen_text)}"')
        elif _readable_chars(ocr_text) >= self.cfg.min_text_chars:
            report.described_by = DescriptionSource.OCR
            parts.append(f'Text in the image (read by OCR): "{_one_line(ocr_text)}"')
        elif recognised:
            report.described_by = DescriptionSource.RECOGNITION
        parts.append(recognised)
        if image.alt_text:
            parts.append(f"Alt text: {image.alt_text}")
        description = ". ".join(p for p in parts if p)
        if description:
            image.description = cut_text(description, self.max_chars)
        if report.described_by is DescriptionSource.NONE and not image.alt_text:
            report.error = "no text could be read in it and no vision model is configured"

    def _recognise(self, taken: IntakeImage, report: ImageReport) -> str:
        """Ask the configured recognition service about our own JPEG copy; the description's
        sentence naming what it recognised above the floors, or "". A failure is recorded as
        one, never as nothing recognised."""
        if self.cfg.recognition == "none":
            report.recognition = "off"
            return ""
        if self.recognizer is None:
            report.recognition = f"skipped: no key ({KEY_VARIABLE})"
            return ""
        try:
            found = self.recognizer.recognise(taken.jpeg(self.cfg.vision_side))
        except SearchError as exc:
            report.recognition = f"failed: {exc}"
            return ""
        report.recognised = above_floors(found, self.cfg)
        dropped = len(found) - len(report.recognised)
        report.recognition = (
            f"{self.recognizer.name}: {len(report.recognised)} kept, {dropped} under the score "
            "floor dropped"
        )
        return recognition_line(report.recognised)

    def _reverse_search(self, source: str, report: ImageReport, as_of: datetime) -> str | None:
        """Fill in the report's reverse-search status and matches; the provenance line for the
        decision's reasons, if a dated match was found."""
        if self.cfg.reverse_search == "none":
            report.reverse_search = "off"
            return None
        if not source.lower().startswith(("https://", "http://")):
            report.reverse_search = "skipped: not a public URL (an inbox file is never sent)"
            return None
        if self.reverse is None:
            report.reverse_search = "skipped: no key (FACTNOTE_IMAGES__SERPAPI_API_KEY)"
            return None
        try:
            found = self.reverse.find(source, limit=self.cfg.reverse_limit)
        except SearchError as exc:
            report.reverse_search = f"failed: {exc}"
            return None
        kept = vetted(found, self.publishers, as_of) if self.publishers is not None else found
        report.reverse_matches = kept
        report.reverse_search = (
            f"{self.reverse.name}: {len(found)} match(es), {len(found) - len(kept)} dated after "
            "as-of left out"
        )
        return provenance_note(f"{report.owner} image {report.number}", kept)

    def match_picture(
        self, taken: IntakeImage, report: ImageReport, as_of: datetime
    ) -> list[ClaimMatch]:
        """Known-claim matches of a picture read elsewhere (a video's keyframe, its pHash and
        OCR already in `report`) among the remembered images; [] without an image store."""
        if self.store is None:
            return []
        return self._near_duplicates(taken, report, as_of)

    def _near_duplicates(
        self, taken: IntakeImage, report: ImageReport, as_of: datetime
    ) -> list[ClaimMatch]:
        assert self.store is not None and report.phash is not None
        found = self.store.near(report.phash, self.cfg.hash_distance)
        matches: list[ClaimMatch] = []
        for seen, dist in found:
            record = _fact_check_of(seen)
            # Two screenshots of one template are a few pHash bits apart whatever they say
            # (bench/image_similarity.py): pictures whose texts differ are only possibly one.
            differs = self._texts_differ(report, seen)
            report.matches.append(_image_match(seen, record, dist, possible=differs))
            if record is not None and not differs:
                matches.append(self._claim_match(record, dist, report, as_of))
        vector = self.embedder.embed(taken.image) if self.embedder is not None else None
        if vector is not None and not found:
            matches.extend(self._embedding_matches(vector, report, as_of))
        self.store.add(
            SeenImage(
                sha256=taken.sha256,
                phash=report.phash,
                source=taken.source,
                seen_at=as_of,
                embedding=to_bytes(vector) if vector is not None else None,
                embedder=self.embedder.name if self.embedder is not None else None,
                content=taken.jpeg(self.cfg.copy_side) if self.cfg.copy_side else None,
                ocr_text=self._read_text(report),
            )
        )
        return matches

    def _read_text(self, report: ImageReport) -> str | None:
        """The text OCR read, "" for none; None when OCR did not run (not known)."""
        if self.ocr is None or not self.cfg.ocr or report.ocr_error is not None:
            return None
        return report.ocr_text

    def _texts_differ(self, report: ImageReport, seen: SeenImage) -> bool:
        """Both pictures carry text and it is not the same text."""
        agreement = text_agreement(report.ocr_text, seen.ocr_text or "", self.cfg.min_text_chars)
        return agreement is not None and agreement < self.cfg.text_agreement

    def _embedding_matches(
        self, vector: npt.NDArray[np.float32], report: ImageReport, as_of: datetime
    ) -> list[ClaimMatch]:
        """The second stage: stored images the embedding finds alike. Each is reported; one a
        fact-check carries is a known claim only when `embedding_auto_match` is set, since
        the calibration put this model's precision under what a templated reply needs."""
        assert self.store is not None and self.embedder is not None and report.phash
        alike = self.store.similar(vector, self.embedder.name, self.cfg.embedding_threshold)
        matches: list[ClaimMatch] = []
        for seen, similarity in alike:
            # An ImageNet model does not read: two screenshots of one template, or two memes on
            # one picture, look alike to it whatever they say (58 % and 81 % of such unrelated
            # pairs over the threshold, bench/image_similarity.py).
            if seen.sha256 == report.sha256 or self._texts_differ(report, seen):
                continue
            record = _fact_check_of(seen)
            dist = distance(report.phash, seen.phash)
            report.matches.append(
                _image_match(
                    seen,
                    record,
                    dist,
                    similarity=similarity,
                    possible=not self.cfg.embedding_auto_match,
                )
            )
            if record is not None and self.cfg.embedding_auto_match:
                match = self._claim_match(record, dist, report, as_of)
                query = f"{report.owner} image {report.number} (embedding {similarity:.2f})"
                matches.append(match.model_copy(update={"score": similarity, "query": query}))
        return matches

    def _claim_match(
        self, record: ClaimRecord, dist: int, report: ImageReport, as_of: datetime
    ) -> ClaimMatch:
        """A pHash hit on a fact-checked image as a known-claim match: the score is the share
        of the 64 hash bits that agree, and every hit within `hash_distance` is strong."""
        date = record.date
        age = None
        if date is not None:
            aware = date if date.tzinfo else date.replace(tzinfo=as_of.tzinfo)
            age = max(0, (as_of - aware).days)
        return ClaimMatch(
            record=record,
            score=round(1.0 - dist / 64, 4),
            dense=0.0,
            lexical=0.0,
            strength=MatchStrength.STRONG,
            possibly_outdated=age is not None and age > self.claims_cfg.max_age_days,
            age_days=age,
            query=f"{report.owner} image {report.number} (pHash distance {dist})",
        )


def _image_match(
    seen: SeenImage,
    record: ClaimRecord | None,
    dist: int,
    *,
    possible: bool,
    similarity: float | None = None,
) -> ImageMatch:
    return ImageMatch(
        sha256=seen.sha256,
        source=seen.source,
        distance=dist,
        fact_check_url=record.review_url if record else None,
        rating=(record.rating_text or record.rating.value) if record else None,
        similarity=similarity,
        possible=possible,
    )


def _fact_check_of(seen: SeenImage) -> ClaimRecord | None:
    if seen.fact_check is None:
        return None
    try:
        return ClaimRecord.model_validate(seen.fact_check)
    except ValidationError:  # a row written by another version: the match stays a plain one
        return None


def fact_check_image(
    taken: IntakeImage,
    record: ClaimRecord,
    seen_at: datetime,
    hash_side: int = 512,
    *,
    embedder: ImageEmbedder | None = None,
    copy_side: int = 0,
    ocr: OcrEngine | None = None,
) -> SeenImage:
    """The image a fact-check carries, to be remembered: a repost of it is a known claim."""
    vector = embedder.embed(taken.image) if embedder is not None else None
    read = ocr.read(taken.image) if ocr is not None else None
    return SeenImage(
        sha256=taken.sha256,
        phash=phash(taken.image, hash_side),
        source=taken.source,
        seen_at=seen_at,
        fact_check=record.model_dump(mode="json"),
        embedding=to_bytes(vector) if vector is not None else None,
        embedder=embedder.name if embedder is not None else None,
        content=taken.jpeg(copy_side) if copy_side else None,
        ocr_text=read.text if read is not None and read.error is None else None,
    )


def configured_fact_check_image(
    taken: IntakeImage,
    record: ClaimRecord,
    seen_at: datetime,
    cfg: ImagesConfig,
    *,
    embedder: ImageEmbedder | None = None,
    ocr: OcrEngine | None = None,
) -> SeenImage:
    """`fact_check_image` as `[images]` asks: the embedding and OCR only where they are on, our
    copy at `copy_side`. The one way fact-checked images and video keyframes are remembered."""
    return fact_check_image(
        taken,
        record,
        seen_at,
        cfg.hash_side,
        embedder=embedder if cfg.embedding else None,
        copy_side=cfg.copy_side,
        ocr=ocr if cfg.ocr else None,
    )


def merge_matches(
    text_matches: Sequence[ClaimMatch], image_matches: Sequence[ClaimMatch], limit: int
) -> list[ClaimMatch]:
    """Known-claim matches by text and by image, one per stored review (the best), best
    first, at most `limit`."""
    best: dict[str, ClaimMatch] = {}
    for found in [*text_matches, *image_matches]:
        key = found.record.key
        if key not in best or found.score > best[key].score:
            best[key] = found
    return sorted(best.values(), key=lambda m: -m.score)[:limit]


def possible_match_notes(report: ImageReport) -> list[str]:
    """One line per possible (embedding-only) match, for the moderator to compare by eye."""
    lines = []
    for match in report.matches:
        if not match.possible:
            continue
        what = (
            f"the image of the fact-check {match.fact_check_url}"
            if match.fact_check_url
            else f"an image seen before ({match.source[:120]})"
        )
        why = (
            f"embedding cosine {match.similarity:.2f}, pHash distance {match.distance}"
            if match.similarity is not None
            else f"pHash distance {match.distance}, but the text in them differs"
        )
        lines.append(
            f"{report.owner} image {report.number} may be {what}: a possible match ({why}), "
            "to be compared by eye; not used for the reply"
        )
    return lines


def text_agreement(a: str, b: str, min_chars: int) -> float | None:
    """How far two images' OCR texts agree, 0..1 (rapidfuzz's token-set ratio: word order,
    repeats and a cropped-off line matter little); None unless both have `min_chars`
    letters or digits."""
    if _readable_chars(a) < min_chars or _readable_chars(b) < min_chars:
        return None
    return fuzz.token_set_ratio(_words(a), _words(b)) / 100.0


def _words(text: str) -> str:
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text.casefold()).split())


def _one_line(text: str) -> str:
    return " / ".join(line.strip() for line in text.splitlines() if line.strip())


def unreadable_only(post: Post, reports: list[ImageReport]) -> str | None:
    """Why the post cannot be checked when its only content is images none of which could be
    read, else None."""
    if not reports or any(r.described_by is not DescriptionSource.NONE for r in reports):
        return None
    if any(image.alt_text or image.description for image in post.images):
        return None
    # A few words beside the image ("@factnote is this true?") are no content of their own:
    # fewer than 3 content words once handles, links and function words are left out.
    own = " ".join(w for w in post.text.split() if not w.startswith("@"))
    if len(terms(own, stemming=False)) >= 3:
        return None
    if post.quoted is not None and post.quoted.text.strip():
        return None
    errors = "; ".join(f"image {r.number}: {r.error}" for r in reports if r.error)
    return "the post's only content is an image that could not be read" + (
        f" ({errors})" if errors else ""
    )
