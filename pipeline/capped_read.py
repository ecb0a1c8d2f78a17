"""Reading a local file whose size is not to be trusted: regular files only, and never more than
a cap of bytes (the size on disk can change between a check and the read, or lie, as
/dev/zero's does).

Claim imports, indexed documents and local images all read files named by whoever runs the
command or fills the inbox; each wraps `CappedReadError` into its own error with its own words.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path


class ReadProblem(StrEnum):
    NOT_FILE = "not a file"  # a directory, a device such as /dev/zero, a pipe, or nothing
    UNREADABLE = "unreadable"
    TOO_LARGE = "too large"


class CappedReadError(Exception):
    """`str()` is the standard wording ("not a file", "unreadable: Permission denied",
    "over 100 bytes"); `detail` is the OS's reason for UNREADABLE."""

    def __init__(self, problem: ReadProblem, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.problem = problem
        self.detail = detail


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (never more are read)."""
    try:
        if not path.is_file():
            raise CappedReadError(ReadProblem.NOT_FILE, "not a file")
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        detail = exc.strerror or str(exc)
        raise CappedReadError(ReadProblem.UNREADABLE, f"unreadable: {detail}", detail) from exc
    if len(data) > limit:
        raise CappedReadError(ReadProblem.TOO_LARGE, f"over {limit} bytes")
    return data
