"""A request row keeps its latest decision's verdict and best evidence tier (migration 0017),
so the review queue and the decisions log filter and count from an index: every way a
decision is written keeps them, and the migration fills them for decisions stored before."""

from __future__ import annotations

from alembic import command
from sqlalchemy import select

from pipeline.records import Decision, Tier, Verdict
from storage.db import Database, alembic_config
from storage.models import Request
from storage.repositories import add_decision, create_cli_request, insert_decision, insert_decisions
from testing.builders import full_decision, post


def _with(verdict: Verdict, tiers: list[Tier]) -> Decision:
    base = full_decision()
    evidence = [base.evidence[0].model_copy(update={"tier": tier}) for tier in tiers]
    return base.model_copy(update={"verdict": verdict, "evidence": evidence})


def _latest(db: Database) -> dict[int, tuple[str | None, int | None]]:
    with db.session() as session:
        rows = session.execute(
            select(Request.id, Request.latest_verdict, Request.latest_tier_rank)
        ).all()
    return {rid: (verdict, rank) for rid, verdict, rank in rows}


def _write_every_way(db: Database) -> list[int]:
    with db.transaction() as session:
        one, two, three, four, none = (
            create_cli_request(session, post("A claim.", id="1", author="someone")).id
            for _ in range(5)
        )
        insert_decision(session, one, _with(Verdict.REFUTED, [Tier.HIGH]))
        insert_decision(session, one, _with(Verdict.MISLEADING, [Tier.UNKNOWN, Tier.LOW]))
        insert_decisions(
            session,
            [
                (two, "cli", _with(Verdict.SUPPORTED, [Tier.MEDIUM])),
                (three, "cli", _with(Verdict.REFUTED, [Tier.AUTHORITY])),
                (two, "cli", _with(Verdict.NOT_ENOUGH_EVIDENCE, [])),
            ],
        )
        request = session.get(Request, four)
        assert request is not None
        add_decision(session, request, _with(Verdict.MISLEADING, [Tier.EXCLUDED, Tier.MEDIUM]))
        assert (request.latest_verdict, request.latest_tier_rank) == ("misleading", 1)
    return [one, two, three, four, none]


def test_every_write_of_a_decision_keeps_the_requests_latest_verdict_and_best_tier(
    main_db: Database,
) -> None:
    one, two, three, four, none = _write_every_way(main_db)
    assert _latest(main_db) == {
        one: ("misleading", 2),  # the later decision; low ranks before unknown
        two: ("not_enough_evidence", None),  # the last of a batch wins; it cites nothing
        three: ("refuted", 0),
        four: ("misleading", 1),
        none: (None, None),
    }


def test_the_migration_fills_them_as_the_decisions_were_written(main_db: Database) -> None:
    _write_every_way(main_db)
    written = _latest(main_db)
    url = main_db.engine.url.render_as_string(hide_password=False)
    command.downgrade(alembic_config(url), "0016")
    command.upgrade(alembic_config(url), "head")
    main_db.engine.dispose()  # the columns were dropped and made again
    assert _latest(main_db) == written
