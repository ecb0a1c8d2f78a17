"""X Community Notes: the AI Note Writer API as a platform adapter (`x_notes`)."""

from adapters.x_notes.adapter import MISLEADING, NotesOptions, XNotesAdapter
from adapters.x_notes.budget import RequestBudget
from adapters.x_notes.client import NoteInfo, NotesClient
from adapters.x_notes.ledger import NotesLedger, PreparedNote, text_hash

__all__ = [
    "MISLEADING",
    "NoteInfo",
    "NotesClient",
    "NotesLedger",
    "NotesOptions",
    "PreparedNote",
    "RequestBudget",
    "XNotesAdapter",
    "text_hash",
]
