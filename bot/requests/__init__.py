"""A request's life: intake, triage, the worker that runs the pipeline, and posting exactly once."""
