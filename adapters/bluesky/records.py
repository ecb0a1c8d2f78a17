"""Post records and their parts, read leniently.

The SDK leaves a record that does not fit the lexicon a `DotDict` (SDK
`models/unknown_union.py`, `UnknownRecordFallback`). `post_record` reads what can be read of it:
text over the lexicon's 3,000 characters is cut, a missing `createdAt` is the indexing time,
unreadable optional fields are left out, each change a note on the record. An unreadable `reply`
makes the record unreadable: a reply read as a top-level post would be answered in the wrong
place.
"""

from __future__ import annotations

from typing import Any

from atproto import models
from atproto_client.models.dot_dict import DotDict
from pydantic import ValidationError

from adapters.base import readable_text, storable

POST_COLLECTION = "app.bsky.feed.post"
MAX_POST_TEXT = 3000  # app.bsky.feed.post `text` maxLength (the SDK model refuses longer)

# The fields of a post record that may be left out when they cannot be read (the lexicon makes
# them optional and the post still says what it says without them). `reply` is not among them:
# a reply read as a top-level post would be answered in the wrong place.
_OPTIONAL_POST_FIELDS = ("embed", "facets", "langs", "labels", "tags", "entities")


def post_record(record: Any, indexed_at: str | None) -> tuple[Any | None, list[str]]:
    """A post record as the SDK's model, reading what can be read of one that does not fit
    the lexicon (the SDK leaves such a record a DotDict): text over the lexicon's 3,000 is cut,
    a missing `createdAt` is the indexing time, unreadable optional fields are left out. Each
    change is a note. (None, why) when it is not a post or cannot be read at all."""
    if isinstance(record, models.AppBskyFeedPost.Record):
        return record, []
    data = record.to_dict() if isinstance(record, DotDict) else record
    if not isinstance(data, dict) or data.get("$type") != POST_COLLECTION:
        kind = data.get("$type") if isinstance(data, dict) else type(record).__name__
        return None, [f"not a post record ({storable(str(kind))[:100]})"]
    data = dict(data)
    notes: list[str] = []
    text = readable_text(data.get("text"), notes)
    if len(text) > MAX_POST_TEXT:
        notes.append(f"text cut to {MAX_POST_TEXT:,} of {len(text):,} characters")
        text = text[:MAX_POST_TEXT]
    data["text"] = text
    if not isinstance(data.get("createdAt"), str) and indexed_at:
        notes.append("createdAt missing: the indexing time is used")
        data["createdAt"] = indexed_at
    for _ in range(len(_OPTIONAL_POST_FIELDS) + 1):
        try:
            return models.AppBskyFeedPost.Record.model_validate(data), notes
        except ValidationError as exc:
            failed = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
            optional = [f for f in _OPTIONAL_POST_FIELDS if f in failed]
            if not optional or failed - set(optional):
                problem = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                    for e in exc.errors(include_url=False, include_input=False)
                )
                return None, [*notes, f"post record cannot be read: {storable(problem)[:300]}"]
            for name in optional:
                data.pop(name, None)
                notes.append(f"{name} could not be read: left out")
    return None, [*notes, "post record cannot be read"]


def facet_links(facets: Any) -> list[str]:
    links: list[str] = []
    for facet in facets or []:
        for feature in facet.features:
            if isinstance(feature, models.AppBskyRichtextFacet.Link):
                links.append(feature.uri)
    return links


def facet_mentions(facets: Any) -> set[str]:
    return {
        feature.did
        for facet in facets or []
        for feature in facet.features
        if isinstance(feature, models.AppBskyRichtextFacet.Mention)
    }


def quoted_ref(embed: Any, *, view: bool = False) -> Any:
    """The quoted post in an embed, if any: its strong ref in a post record's embed, or with
    `view` its record view in a post view's embed. A record-with-media embed holds it one level
    deeper."""
    if view:
        plain, with_media = models.AppBskyEmbedRecord.View, models.AppBskyEmbedRecordWithMedia.View
    else:
        plain, with_media = models.AppBskyEmbedRecord.Main, models.AppBskyEmbedRecordWithMedia.Main
    if isinstance(embed, plain):
        return embed.record
    if isinstance(embed, with_media):
        return embed.record.record
    return None


def replies_to(record: Any, uri: str) -> bool:
    """Whether `record` is a post replying directly to `uri`."""
    return (
        models.is_record_type(record, models.AppBskyFeedPost)
        and record.reply is not None
        and record.reply.parent.uri == uri
    )
