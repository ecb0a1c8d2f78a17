"""No reply repeats, byte for byte, one the bot already sent or queued on the same platform.

X refuses a post identical to one the account made recently ("duplicate content"), so a second
identical reply would fail there; and a reused answer (triage's "claim answered before") or a
templated known-claim reply is the same text for everyone who asks about the same claim, the
same person included. Such a reply carries this request's reference number: unique by
construction, and something a reader or an auditor can quote back.
"""

from __future__ import annotations

from bot.requests.to_pipeline import reply_platform
from pipeline.config import GuardConfig
from pipeline.records import Decision, DecisionStatus
from pipeline.reply import guard
from storage.requests import repeated_by_query

__all__ = ["referenced", "repeat_params", "repeated_by_query", "unrepeated_given"]


def referenced(text: str, request_id: int) -> str:
    return f"{text} (ref. {request_id})"


def repeat_params(request_id: int, platform: str, decision: Decision) -> dict[str, object]:
    """The values `repeated_by_query` binds for `decision` (a reply of None matches no row:
    a decision without a reply repeats nothing), for a caller that reads it along with a
    query of its own (the worker's read of the request it records, issue 12);
    `unrepeated_given` then takes what it read."""
    reply = decision.reply if decision.status is DecisionStatus.REPLY else None
    return {"platform": platform, "reply": reply or None, "request_id": request_id}


def unrepeated_given(
    earlier: int | None, request_id: int, platform: str, decision: Decision, cfg: GuardConfig
) -> Decision:
    """`decision` with a reply no earlier request sent: unchanged when it is new (`earlier`
    None: `repeated_by_query` found no request that sent the same reply), else with this
    request's reference added (and the guard run again on it); an abstention when the
    reference does not fit the platform's rules. The worker reads `earlier` in its record's
    own transaction, with the request it records: no query of its own per request."""
    if earlier is None or decision.status is not DecisionStatus.REPLY or not decision.reply:
        return decision
    text = referenced(decision.reply, request_id)
    allowed = [*decision.urls, *(e.url for e in decision.evidence)]
    report = guard.check_text(text, reply_platform(platform), evidence_urls=allowed, cfg=cfg)
    if not report.valid:
        return decision.model_copy(
            update={
                "status": DecisionStatus.ABSTAIN,
                "reasons": [
                    f"the reply repeats request #{earlier}'s and a reference does not fit: "
                    + "; ".join(map(str, report.problems)),
                    *decision.reasons,
                ],
            }
        )
    return decision.model_copy(
        update={
            "reply": text,
            "urls": report.urls,
            "reasons": [
                f"the reply repeats request #{earlier}'s: this request's reference was added "
                "so the same text is never sent twice",
                *decision.reasons,
            ],
        }
    )
