"""The correction pipeline: one post in, one decision out, no platform and no database.

`check.Checker` runs the stages in order; the folders are the stages and the tools they share:

- `post/`: the post as text (its quote or parent, boilerplate set aside) and its claims;
- `claims/`: known claims (published fact-checks) imported, kept and matched, with the
  polarity rules (`claims/polarity/`) that tell a repeat from a reversal;
- `authority/`: authorities' own statements, searched before the web;
- `research/`: search tier by tier, fetch, score, extract evidence, decide, search again;
- `reply/`: the verdict, the writer, the platform formats and the guard;
- `images/`, `video/`: media read as text, offline, matched to fact-checked media;
- `learning/`: the judge of a finished decision and the experience memory;
- shared tools: `web/` (SSRF guard, fetching, URLs, page text), `search/` (providers),
  `relevance/` (the embedding model, page scores), `sources/` (publisher tiers), `llm/` (the
  one client and its prompts), `indexes/` (tables of the main database, full-text search).

At the top: the settings (`config`), the records that cross boundaries (`records`, `context`,
`failures`), the long-lived parts built once per process (`shared_parts`), and three small
safety helpers (`redaction`, `safejson`, `capped_read`).
"""
