"""Queries triage (`bot.requests.triage`) runs: the requests waiting in `received`, what its rules
read for a batch of them (hourly counts, opt-outs, earlier answers to the same claim), and the
opt-out a command records. The bot keeps the rules and writes no SQL of its own."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from storage.models import OptOut, Request, RequestState

_RECEIVED = RequestState.RECEIVED.value


@dataclass(frozen=True)
class BatchReads:
    """What triage's rules read for a batch: requests taken on since a moment (overall, and
    per platform and requester), opt-outs of the requesters, and the latest answering request
    per (platform, claim key)."""

    overall: int
    per_user: dict[tuple[str, str], int]
    opted_out: dict[tuple[str, str], bool]
    answered: dict[tuple[str, str], int]


def received_ids(session: Session) -> list[int]:
    """Every request still in `received`, by id."""
    return list(
        session.scalars(select(Request.id).where(Request.state == _RECEIVED).order_by(Request.id))
    )


def received(session: Session, ids: Sequence[int]) -> list[Request]:
    """Those of these requests still in `received`, by id."""
    return list(
        session.scalars(
            select(Request)
            .where(Request.id.in_(ids), Request.state == _RECEIVED)
            .order_by(Request.id)
        )
    )


def batch_reads(
    session: Session,
    users: Collection[str],
    keys: Collection[str],
    *,
    accepted: Sequence[str],
    accepted_since: datetime,
    reusable: Sequence[str],
    answered_since: datetime,
) -> BatchReads:
    """`BatchReads` for requests of these requesters and claim keys: counted are requests in
    an `accepted` state created since `accepted_since`; an answer is a request in a `reusable`
    state, with a reply, created since `answered_since`."""
    recent = (Request.created_at >= accepted_since, Request.state.in_(accepted))
    overall = session.scalar(select(func.count(Request.id)).where(*recent)) or 0
    per_user = session.execute(
        select(Request.platform, Request.requester, func.count(Request.id))
        .where(*recent, Request.requester.in_(users))
        .group_by(Request.platform, Request.requester)
    )
    opted = session.execute(
        select(OptOut.platform, OptOut.user, OptOut.opted_out).where(OptOut.user.in_(users))
    )
    answered = session.execute(
        select(Request.platform, Request.target_key, func.max(Request.id))
        .where(
            Request.target_key.in_(keys),
            Request.state.in_(reusable),
            Request.reply_text.is_not(None),
            Request.created_at >= answered_since,
        )
        .group_by(Request.platform, Request.target_key)
    )
    return BatchReads(
        overall=overall,
        per_user={(p, u): n for p, u, n in per_user},
        opted_out={(p, u): bool(o) for p, u, o in opted},
        answered={(p, k): n for p, k, n in answered if k is not None},
    )


def opt_out_to_write(session: Session, platform: str, user: str) -> OptOut:
    """The user's opt-out row, created when there is none, in the session: set its fields."""
    row = session.get(OptOut, (platform, user)) or OptOut(platform=platform, user=user)
    session.add(row)
    return row
