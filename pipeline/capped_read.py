"""Reading a local file whose size is not to be trusted: regular files only, and never more than
a cap of bytes (the size on disk can change between a check and the read, or lie, as
/dev/zero's does).

Claim imports, indexed documents and local images all read files named by whoever runs the
command or fills the inbox; each wraps `CappedReadError` into its own error with its own words.
Images and videos named by an inbox entry are read only from under the inbox folder
(`read_in_folder`).
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


def read_in_folder(source: str, folder: str, limit: int) -> bytes:
    """The bytes of the file `source` names, only from under `folder` (a relative name is
    inside it, whatever the working directory: an inbox entry names its media beside it), at
    most `limit`. Every refusal is a `ValueError` whose text starts with `source`."""
    try:
        root = Path(folder).resolve()
        path = Path(source)
        resolved = (path if path.is_absolute() else root / path).resolve()
        if not resolved.is_relative_to(root):
            raise ValueError(f"{source}: outside the inbox folder {folder}")
        if not resolved.exists():
            raise ValueError(f"{source}: no such file in the inbox folder {folder}")
        return read_capped(resolved, limit)
    except CappedReadError as exc:
        shown = exc.detail if exc.problem is ReadProblem.UNREADABLE else str(exc)
        raise ValueError(f"{source}: {shown}") from exc
    except OSError as exc:
        raise ValueError(f"{source}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        if str(exc).startswith(source):
            raise
        raise ValueError(f"{source}: {exc}") from exc  # a NUL byte in the path
