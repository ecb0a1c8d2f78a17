"""Queries about the review app's accounts that the bot's review steps run."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.models import User


def is_active(session: Session, username: str) -> bool:
    """Whether an account of that name exists and is active."""
    found = session.scalars(
        select(User.id).where(User.username == username, User.active.is_(True))
    ).first()
    return found is not None
