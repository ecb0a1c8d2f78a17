"""The lemon-water claim and the posts about it that the known-claim tests share."""

from __future__ import annotations

from datetime import UTC, datetime

NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
LEMON = "Drinking hot lemon water every hour kills the flu virus in your throat."
LEMON_URL = "https://www.snopes.com/fact-check/hot-lemon-water-flu/"
PARAPHRASE = "Hot lemon water taken every hour kills flu viruses in the throat."
# The same topic, another (true) claim: never a strong match.
RELATED = "Lemon water helps you stay hydrated when you have the flu."
NEGATED = "Drinking hot lemon water every hour does not kill the flu virus in your throat."
GERMAN = "Heißes Zitronenwasser jede Stunde zu trinken tötet das Grippevirus im Hals."
