"""The scheduled pull of authority accounts' timelines into the authority index.

Only accounts whose platform has an enabled adapter are pulled; each pull asks for posts newer
than the newest one stored. A platform error skips that account until the next run (a rate
limit is not waited for inside the job).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from adapters.base import Adapter, PlatformError
from pipeline.authority.retrieval import AuthorityIndex, Statement
from pipeline.shared_parts import SharedParts
from storage.indexes import open_statement_rows

log = logging.getLogger(__name__)

# The statement's fields that the post holds under the same name; the others name the account.
_SAME_NAMED = {"text", "created_at"}


@dataclass
class PullReport:
    new: dict[str, int] = field(default_factory=dict)  # "platform:handle" -> new statements
    errors: dict[str, str] = field(default_factory=dict)


def pull_timelines(
    shared: SharedParts, adapters: dict[str, Adapter], limit: int = 100
) -> PullReport:
    report = PullReport()
    accounts = [a for a in shared.cfg.authority.accounts if a.platform in adapters]
    if not accounts:
        return report
    if shared.authority_index is None:
        # The first pull creates the index; checks use it from then on.
        shared.authority_index = AuthorityIndex(
            open_statement_rows(shared.cfg.authority.path),
            shared.embedder,
            cfg=shared.cfg.authority,
        )
    index = shared.authority_index
    for account in accounts:
        key = f"{account.platform}:{account.handle}"
        latest = index.latest(account.platform, account.handle)
        try:
            posts = adapters[account.platform].recent_posts(
                account.handle, limit=limit, since=latest.created_at if latest else None
            )
        except PlatformError as exc:
            report.errors[key] = f"{type(exc).__name__}: {exc}"
            log.warning("timeline pull %s failed: %s", key, exc)
            continue
        except Exception as exc:  # an adapter's bug must not stop the cycle's polls
            report.errors[key] = f"{type(exc).__name__}: {exc}"
            log.exception("timeline pull %s failed", key)
            continue
        statements = [
            Statement(
                **post.model_dump(include=_SAME_NAMED),
                platform=account.platform,
                account=account.handle,
                post_id=post.id,
                url=post.url or f"{account.platform}:{account.handle}/{post.id}",
            )
            for post in posts
            if post.text.strip()
        ]
        report.new[key] = index.add_statements(statements)
    return report
