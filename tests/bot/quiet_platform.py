"""The read side of a fake platform that has nothing to tell: the part of `adapters.base.Adapter`
a test's fake does not care about."""

from __future__ import annotations

from datetime import datetime

from adapters.base import RateBudget, ReplyReceipt, SocialPost, Summons


class QuietPlatform:
    """No reply of the bot found, no recent posts of a user, no rate budgets to report."""

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        return None

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        return []

    def budgets(self) -> list[RateBudget]:
        return []
