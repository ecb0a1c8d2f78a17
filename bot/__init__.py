"""The running bot: platforms in, requests through the pipeline, replies out, people in the loop.

- `requests/`: a request's life: intake, triage, the worker that runs the pipeline, posting once;
- `moderation/`: moderator actions on drafts and the review app's accounts;
- `notes/`: Community Notes on top of decisions;
- `memory/`: experience memory learned from finished episodes and moderators' actions;
- `reports/`: the audit report, the eval report and the export;
- `ops/`: wiring, the service and its scheduler, the queue's workers, the leader, start-up
  lines, metrics, the health check and scheduled jobs;
- `web/`: the moderator review app; `commands/`: the `factnote` sub-commands (`cli` ties them).

At the top: the settings (`config`, `config_check`, `overrides` an admin changed, `errors`
for one-line refusals), the platform registry (`platforms`), logging (`logs`), dates and
progress bars.
"""
