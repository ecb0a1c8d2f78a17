"""Where the saved test pages live (served by the `http_server` fixture)."""

from __future__ import annotations

from pathlib import Path

FIXTURE_PAGES = Path(__file__).resolve().parent / "fixtures" / "pages"
