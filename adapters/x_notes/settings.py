"""The `[x_notes]` section of the settings: the Community Notes writer's feed, gates and budgets."""

from __future__ import annotations

from pydantic import Field

from adapters.base import AdapterConfig


class XNotesAdapterConfig(AdapterConfig):
    """The Community Notes writer (`adapters/x_notes`). Its credentials are the `[x]` section's
    (OAuth 1.0a user tokens of the writer account)."""

    poll_interval_s: float = 600.0
    # On until explicitly turned off; X refuses non-test calls until the writer is admitted.
    test_mode: bool = True
    base_url: str = "https://api.twitter.com"  # a loopback fake in tests and the demo
    evaluate_path: str = "/2/notes/evaluate"  # older docs: /2/evaluate_note
    post_selection: str = "feed_size:small"
    max_results: int = Field(default=100, ge=1, le=100)
    max_pages: int = Field(default=1, ge=1)
    max_post_age_h: float = Field(default=24.0, gt=0)
    max_drafts_per_poll: int = Field(default=10, ge=0)
    # claim_opinion_score a note must exceed: in test mode, and once admitted.
    evaluate_floor: float = 0.5
    evaluate_floor_admitted: float = 0.0
    initial_daily_cap: int = Field(default=10, ge=0)
    queue_ttl_h: float = Field(default=24.0, gt=0)
    request_budget: int = Field(default=90, ge=1)  # calls per budget window, all endpoints
    budget_window_s: float = Field(default=900.0, gt=0)
    sync_interval_h: float = Field(default=3.0, gt=0)
    timeout_s: float = Field(default=20.0, gt=0)

    @property
    def floor(self) -> float:
        return self.evaluate_floor if self.test_mode else self.evaluate_floor_admitted
