"""The technical failures that stop a check, each naming the stage it stopped.

A stage's error derives from `PipelineFailure`; the checker turns any of them into a `failed`
decision that names `stage` (never an abstention, never "no evidence").
"""

from __future__ import annotations


class PipelineFailure(Exception):
    """A technical failure of one pipeline stage; `stage` names it in the decision."""

    stage: str = "pipeline"
