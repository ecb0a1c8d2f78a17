"""Builds the `x_notes` adapter from the settings: the `[x]` section's OAuth 1.0a user tokens,
the `[x_notes]` section's options, and the SQL store on the bot's database."""

from __future__ import annotations

from datetime import timedelta

from adapters.x_notes.adapter import NotesOptions, XNotesAdapter
from adapters.x_notes.budget import RequestBudget
from adapters.x_notes.client import NotesClient
from bot.config import Settings, video_caps, x_credentials
from bot.notes.store import SqlNoteStore
from pipeline.records import utcnow
from storage.db import Database


def notes_options(settings: Settings) -> NotesOptions:
    cfg = settings.x_notes
    return NotesOptions(
        test_mode=cfg.test_mode,
        post_selection=cfg.post_selection,
        max_results=cfg.max_results,
        max_pages=cfg.max_pages,
        max_age=timedelta(hours=cfg.max_post_age_h),
        max_drafts_per_poll=cfg.max_drafts_per_poll,
        floor=cfg.floor,
        initial_cap=cfg.initial_daily_cap,
        queue_ttl=timedelta(hours=cfg.queue_ttl_h),
        sync_interval=timedelta(hours=cfg.sync_interval_h),
        known_bots=tuple(settings.runtime.known_bots),
        video_caps=video_caps(settings),
    )


def build_notes_adapter(settings: Settings, db: Database | None = None) -> XNotesAdapter:
    cfg = settings.x_notes
    budget = RequestBudget(cfg.request_budget, timedelta(seconds=cfg.budget_window_s), utcnow)
    client = NotesClient(
        x_credentials(settings.x),
        budget,
        base_url=cfg.base_url,
        evaluate_path=cfg.evaluate_path,
        timeout_s=cfg.timeout_s,
    )
    if db is None:
        db = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    return XNotesAdapter(client, SqlNoteStore(db), notes_options(settings), clock=utcnow)
