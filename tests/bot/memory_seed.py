"""A decided request to learn memory from, with moderator actions recorded on it, and a scripted
distiller: shared by the memory store and memory schedule tests."""

from __future__ import annotations

from typing import Any

from pipeline.records import (
    ClaimAnalysis,
    Decision,
    DecisionStatus,
    MemoryUse,
    Platform,
    Trace,
    Verdict,
)
from storage.db import Database
from storage.models import ReviewAction
from storage.repositories import add_decision, create_cli_request
from testing.fakes.openai_server import Reply
from testing.scenarios import POST


def lemon_decision(memory: list[MemoryUse] | None = None) -> Decision:
    analysis = ClaimAnalysis(checkable=True, claims=["Lemon water kills flu"])
    return Decision(
        status=DecisionStatus.REPLY,
        verdict=Verdict.REFUTED,
        platform=Platform.X,
        reply="Experts say no.",
        as_of=POST.created_at,
        trace=Trace(analysis=analysis, memory=memory or []),
    )


def request_with_actions(db: Database, *actions: tuple[str, dict[str, Any]]) -> int:
    with db.transaction() as session:
        request = create_cli_request(session, POST)
        row = add_decision(session, request, lemon_decision())
        for action, detail in actions:
            session.add(
                ReviewAction(request_id=request.id, actor="mod", action=action, detail=detail)
            )
        return row.id


def distiller(body: dict[str, Any]) -> Reply:
    user = body["messages"][-1]["content"]
    phase = "search" if "rejected" in user else "writing"
    return Reply.json(
        {"items": [{"phase": phase, "trigger": f"{phase} lemon flu", "strategy": user[-300:]}]}
    )
