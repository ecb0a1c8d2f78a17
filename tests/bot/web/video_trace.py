"""Video reports put into a seeded request's trace, as the check stores them: shared by the
video item-page tests and their browser test."""

from __future__ import annotations

from sqlalchemy import select

from pipeline.video.records import VideoReport
from storage.models import DecisionRow
from tests.bot.web.app_env import AppEnv


def put_videos(app_env: AppEnv, reports: list[VideoReport]) -> int:
    """The reports in the latest decision trace of the request awaiting review, as the
    check stores them; the request's id."""
    rid = app_env.world.ids["review_local"]
    with app_env.db.session() as session:
        decision = session.scalars(
            select(DecisionRow).where(DecisionRow.request_id == rid).order_by(DecisionRow.id.desc())
        ).first()
        assert decision is not None
        videos = [r.model_dump(mode="json") for r in reports]
        decision.trace = {**decision.trace, "videos": videos}
        session.commit()
    return rid
