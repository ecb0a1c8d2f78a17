"""What every stage of one check needs to know about it, in one frozen record.

The checker builds it once (`pipeline.check`) and hands it to the stages (analysis, research,
writing) instead of each taking the post, the time, the platform and the ledger separately.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from pipeline.llm.client import CallLedger
from pipeline.records import Platform, Post


@dataclass(frozen=True)
class CheckContext:
    # The post as the stages read it: a copy cut to the prompt limits, whose images the
    # describer annotates before the analysis.
    post: Post
    platform: Platform  # the reply format: X, Bluesky or a Community Note
    as_of: datetime  # sources must predate this
    replay: bool  # evaluation and replay: as-of is the post's own time (see `Checker.check`)
    lang: str | None  # the post's language, which the reply is written in
    use_llm: bool  # an LLM endpoint is configured
    ledger: CallLedger = field(default_factory=CallLedger)  # every LLM call of the check
