"""The Community Notes API JSON, as far as the note writer asks for and reads it.

Shapes, from the primary sources:

* `GET /2/notes/search/posts_eligible_for_notes`: posts in the API v2 post shape with
  `includes` and `meta.next_token` (docs.x.com/x-api/community-notes/quickstart; xdk
  `CommunityNotesClient.search_eligible_posts`), read with the X adapter's `TweetPage` (which
  reads spec 2.159's and 2.167's names), plus `note_request_suggestions`,
  `matched_media_notes` and `suggested_source_links` (twitter/communitynotes
  documentation/api/overview.md; spec 2.167's Post).
* `POST /2/notes/evaluate` (older docs `/2/evaluate_note`) -> `{"data": {"claim_opinion_score":
  float}}` (docs.x.com/x-api/community-notes/evaluate-a-community-note).
* `POST /2/notes` -> `{"data": {"id": ...}}`
  (docs.x.com/x-api/community-notes/create-community-notes).
* `GET /2/notes/search/notes_written` -> `{"data": [Note], "meta": {...}}` with each note's
  `status` and `test_result.evaluation_outcome` buckets
  (docs.x.com/x-api/community-notes/search-community-notes-written).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from adapters.x.api import TweetPage

__all__ = ["CreatedNote", "EligiblePage", "Evaluation", "WrittenNote", "WrittenPage"]


class _Model(BaseModel):
    model_config = {"extra": "ignore"}


class EligiblePage(TweetPage):
    """One page of the eligible-posts feed: the v2 post page, read post by post, plus what the
    feed says of each post's note requests and shown notes."""

    # Post id: note requests on it (`note_request_suggestions`, spec 2.167; in 2.159's names,
    # which cannot ask for those, the suggested source links, each from a request).
    note_requests: dict[str, int] = Field(default_factory=dict)
    # Post id: a note on its media is already shown (`matched_media_notes`, spec 2.167).
    shown_notes: set[str] = Field(default_factory=set)

    @classmethod
    def read(cls, raw: Any) -> EligiblePage:
        """The page, and each post's note requests and matched notes read from the raw items
        (the post model keeps only the fields it knows)."""
        page = cls.model_validate(raw)
        for item in raw.get("data") or [] if isinstance(raw, dict) else []:
            if not isinstance(item, dict) or item.get("id") is None:
                continue
            post_id = str(item["id"])
            asked = item.get("note_request_suggestions")
            if asked is None:
                asked = item.get("suggested_source_links")
            n = len(asked) if isinstance(asked, list) else asked
            page.note_requests[post_id] = n if isinstance(n, int) else 0
            if _shown(item.get("matched_media_notes")):
                page.shown_notes.add(post_id)
        return page


def _shown(matches: Any) -> bool:
    """Whether a media-note match says the note is shown ("matched_and_shown"; the status
    values are not enumerated in the spec, so any status naming "shown" counts)."""
    if not isinstance(matches, list):
        return False
    return any(
        isinstance(m, dict) and "shown" in str(m.get("match_status") or "").lower() for m in matches
    )


class Evaluation(_Model):
    claim_opinion_score: float


class EvaluateResult(_Model):
    data: Evaluation


class CreatedNote(_Model):
    id: str


class CreateResult(_Model):
    data: CreatedNote


class WrittenNote(_Model):
    id: str
    post_id: str = ""
    status: str | None = None
    scoring_status: str | None = None
    # {evaluator type: bucket}, from `test_result.evaluation_outcome`.
    buckets: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flatten(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        raw_info = data.get("info")
        info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
        result = data.get("test_result")
        # `test_result.evaluation_outcome` is a list (template-api-note-writer); some clients
        # show one outcome as the `test_result` object itself.
        outcome = result.get("evaluation_outcome", [result]) if isinstance(result, dict) else []
        buckets = {
            str(o.get("evaluator_type")): str(o.get("evaluator_score_bucket"))
            for o in (outcome if isinstance(outcome, list) else [])
            if isinstance(o, dict) and o.get("evaluator_type")
        }
        return {
            **data,
            "post_id": str(data.get("post_id") or info.get("post_id") or ""),
            "buckets": buckets,
        }


class WrittenMeta(_Model):
    next_token: str | None = None
    result_count: int | None = None


class WrittenPage(_Model):
    data: list[WrittenNote] = Field(default_factory=list)
    meta: WrittenMeta = Field(default_factory=WrittenMeta)
