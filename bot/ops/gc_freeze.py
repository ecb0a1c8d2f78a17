"""The heap a long-running process builds at start (modules, models, indexes, settings), kept
out of the garbage collector's way.

A worker holds a few hundred thousand long-lived objects once its models and modules are
loaded; every full collection, triggered by the allocations of ordinary work (ORM rows, JSON,
events), walks all of them again. Measured on the runtime bench (issue 12): 0.3-0.7 s of full
collections per 1,000 summons taken in and triaged, a third of the time on PostgreSQL.
`gc.freeze` moves what exists now to the permanent generation, which collections skip
(https://docs.python.org/3/library/gc.html#gc.freeze); it is collected first, so no garbage
is frozen with it. What is allocated later is collected as before.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_frozen = False


def freeze_startup_heap() -> bool:
    """Call once the process has loaded what it keeps for its life (before taking work).
    Once per process: later calls (a scheduler's restart of its loop, a second worker loop in
    the same process) do nothing, so the full collection is paid once. True when it froze."""
    global _frozen
    with _lock:
        if _frozen:
            return False
        _frozen = True
    gc.collect()
    gc.freeze()
    return True
