"""Account setup: the profile's `bot` self-label (`factnote setup bluesky`).

Bluesky asks automated accounts to label themselves (lexicon
`com.atproto.label.defs#selfLabels`). The label is added with a compare-and-swap `putRecord`
that keeps every other field of the profile, so a profile edited meanwhile is not overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from atproto import models

from adapters.bluesky.client import BlueskyClient
from adapters.bluesky.errors import NotFound
from adapters.bluesky.views import BOT_LABEL

PROFILE_COLLECTION = "app.bsky.actor.profile"


@dataclass(frozen=True)
class BotLabelResult:
    """What `ensure_bot_label` found and did."""

    did: str
    handle: str
    changed: bool
    labels: list[str]


def ensure_bot_label(client: BlueskyClient) -> BotLabelResult:
    """Give the profile the `bot` self-label, keeping every other field. Idempotent."""
    me = client.ensure_login()
    repo = client.sdk.com.atproto.repo
    try:
        got = client.call(
            "getRecord",
            lambda: repo.get_record(
                models.ComAtprotoRepoGetRecord.Params(
                    repo=me.did, collection=PROFILE_COLLECTION, rkey="self"
                )
            ),
        )
        record: dict[str, Any] = models.get_model_as_dict(got.value)
        swap: str | None = got.cid
    except NotFound:
        record, swap = {"$type": PROFILE_COLLECTION}, None
    labels = record.get("labels")
    values: list[dict[str, Any]] = []
    if isinstance(labels, dict) and isinstance(labels.get("values"), list):
        values = [v for v in labels["values"] if isinstance(v, dict)]
    names = [str(v.get("val")) for v in values]
    if BOT_LABEL in names:
        return BotLabelResult(did=me.did, handle=me.handle, changed=False, labels=names)
    record["labels"] = {
        "$type": "com.atproto.label.defs#selfLabels",
        "values": [*values, {"val": BOT_LABEL}],
    }
    client.call(
        "putRecord",
        lambda: repo.put_record(
            models.ComAtprotoRepoPutRecord.Data(
                repo=me.did,
                collection=PROFILE_COLLECTION,
                rkey="self",
                record=record,
                # Compare-and-swap: a profile edited meanwhile is not overwritten.
                swap_record=swap,
            )
        ),
    )
    return BotLabelResult(did=me.did, handle=me.handle, changed=True, labels=[*names, BOT_LABEL])
