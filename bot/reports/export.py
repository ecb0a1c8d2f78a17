"""Export of every decision with its full trace, for analysis outside factnote.

One record per decision (a retried request has several), with the request it answered, the
evidence in order with each page snapshot's `content_hash`, the LLM calls, the whole trace and
the moderators' actions on its draft. `origin` tells the bot's requests from `factnote check`
runs (`check`), which are recorded the same way but were never asked of the bot.
JSONL keeps the structure; CSV flattens it, with nested parts as JSON text. In CSV, a cell that
a spreadsheet would run as a formula (leading =, +, -, @, tab or CR) gets a leading apostrophe:
posts are untrusted, and auditors open these files in spreadsheets.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal, TextIO

from pydantic import BaseModel

from bot.ops.summary import CLI_PLATFORM
from pipeline.records import Evidence, LLMCall
from storage import requests as stored
from storage.db import Database, Session
from storage.mapping import column_values
from storage.models import Base, DecisionRow, ReviewAction
from storage.repositories import decision_from_row

Format = Literal["jsonl", "csv"]
_BATCH = 200
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class _Position(BaseModel):
    position: int


class ExportEvidence(Evidence, _Position):
    """An evidence item with its place in the decision's order (written first)."""


class ExportAction(BaseModel):
    """A moderator's (or the review deadline's) action on a decision's draft."""

    actor: str
    action: str
    detail: dict[str, Any]
    at: datetime


class ExportRecord(BaseModel):
    decision_id: int
    origin: Literal["bot", "check"]
    request_id: int
    platform: str
    summons_id: str
    requester: str
    request_state: str
    request_mode: str
    request_reason: str
    request_created_at: datetime
    final_text: str | None  # what was (or would be) posted, after any moderator edit
    reply_id: str | None
    posted_at: datetime | None
    target_text: str | None
    status: str
    verdict: str | None
    confidence: float
    reply_platform: str
    reply: str | None  # the pipeline's own draft
    urls: list[Any]
    reasons: list[Any]
    lang: str | None
    as_of: datetime
    error: str | None
    decided_at: datetime
    timings: dict[str, Any]
    llm_calls_count: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    content_hashes: list[str]
    evidence: list[ExportEvidence]
    llm_calls: list[LLMCall]
    trace: dict[str, Any]
    review_actions: list[ExportAction]


# Columns exported under another name: in one flat record, a decision's and its request's
# columns of one name would collide. Every other column keeps its name; the record takes the
# columns it has fields for.
_DECISION_NAMES = {"id": "decision_id", "platform": "reply_platform", "created_at": "decided_at"}
_REQUEST_NAMES = {
    "state": "request_state",
    "mode": "request_mode",
    "reason": "request_reason",
    "created_at": "request_created_at",
    "reply_text": "final_text",
}


def _named(row: Base, names: dict[str, str]) -> dict[str, Any]:
    return {names.get(name, name): value for name, value in column_values(row).items()}


def _record(row: DecisionRow, actions: list[ReviewAction]) -> ExportRecord:
    request = row.request
    decision = decision_from_row(row)
    return ExportRecord.model_validate(
        _named(request, _REQUEST_NAMES)
        | _named(row, _DECISION_NAMES)
        | {
            "origin": "check" if request.platform == CLI_PLATFORM else "bot",
            "target_text": (request.target or {}).get("text"),
            "content_hashes": [e.content_hash for e in row.evidence],
            "evidence": [
                ExportEvidence(position=i, **e.model_dump())
                for i, e in enumerate(decision.evidence)
            ],
            "llm_calls": decision.trace.llm_calls,
            "review_actions": [
                ExportAction(actor=a.actor, action=a.action, detail=a.detail or {}, at=a.created_at)
                for a in actions
            ],
        }
    )


def _acted_on(decisions: list[DecisionRow], action: ReviewAction) -> int:
    """The decision whose draft an action acted on: the last one made before it."""
    before = [d for d in decisions if d.created_at <= action.created_at]
    return (before[-1] if before else decisions[0]).id


def _actions_by_decision(
    session: Session, rows: list[DecisionRow]
) -> dict[int, list[ReviewAction]]:
    requests = {row.request_id: row.request for row in rows}
    found: dict[int, list[ReviewAction]] = {}
    for action in stored.review_actions_of(session, list(requests)):
        decisions = sorted(requests[action.request_id].decisions, key=lambda d: d.id)
        found.setdefault(_acted_on(decisions, action), []).append(action)
    return found


def export_records(db: Database, since: datetime | None = None) -> Iterator[ExportRecord]:
    """Every decision (made at or after `since`), oldest first, read in batches."""
    last_id = 0
    while True:
        with db.session() as session:
            rows = stored.decisions_after(session, last_id, since, _BATCH)
            if not rows:
                return
            actions = _actions_by_decision(session, rows)
            batch = [_record(row, actions.get(row.id, [])) for row in rows]
        yield from batch
        last_id = rows[-1].id


def write_jsonl(records: Iterator[ExportRecord], out: TextIO) -> int:
    count = 0
    for record in records:
        out.write(json.dumps(record.model_dump(mode="json"), ensure_ascii=False) + "\n")
        count += 1
    return count


CSV_COLUMNS = tuple(ExportRecord.model_fields)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csv(records: Iterator[ExportRecord], out: TextIO) -> int:
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    count = 0
    for record in records:
        data = record.model_dump(mode="json")
        data["content_hashes"] = " ".join(record.content_hashes)
        writer.writerow([_cell(data[column]) for column in CSV_COLUMNS])
        count += 1
    return count


def write_export(db: Database, fmt: Format, out: TextIO, since: datetime | None = None) -> int:
    records = export_records(db, since)
    return write_jsonl(records, out) if fmt == "jsonl" else write_csv(records, out)
