"""Running one image decode in a child process with a CPU-time and memory budget.

A decoder is C code: nothing in this process can stop it once it runs. A progressive JPEG may
repeat a scan of a few bytes tens of thousands of times and libjpeg decodes every repeat over
the whole image (a 185 KB one took 48 s of CPU, issue 33), and other formats have slow paths of
their own. So the decode runs in a forked child that limits itself with `setrlimit`: past
`cpu_s` seconds of CPU the kernel ends it (SIGXCPU, then SIGKILL a second later), and it may map
only `memory_bytes` more than it started with. The parent also stops waiting after a wall-clock
allowance, for a child that is starved rather than busy, and kills it.

A fork, not a spawned interpreter: the child already has Pillow loaded and starts in
milliseconds, and it runs nothing but the decode (no logging, no imports, no other thread's
work) before `os._exit`, so the locks other threads held at the fork are never needed in it.
"""

from __future__ import annotations

import math
import os
import resource
import select
import signal
import time
from collections.abc import Callable
from typing import Any

# The child's fork and the pipe's transfer, beyond its CPU time.
WALL_ALLOWANCE_S = 5.0
_PAGE = os.sysconf("SC_PAGE_SIZE")
_OK, _REFUSED = b"\x01", b"\x00"


class DecodeRefused(Exception):
    """The child ran out of its budget, died, or reported the image unreadable."""


def run_bounded(
    fn: Callable[..., bytes], args: tuple[Any, ...], *, cpu_s: float, memory_bytes: int
) -> bytes:
    """`fn(*args)` in a child process under the budget; an exception `fn` raises comes back as
    `DecodeRefused` with its message. Only bytes cross back (no pickle: were the decoder ever
    subverted by an image, the parent must read nothing but data from the child)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        _child(write_fd, fn, args, cpu_s, memory_bytes)
    os.close(write_fd)
    wall_s = cpu_s + WALL_ALLOWANCE_S
    try:
        data = _read_all(read_fd, time.monotonic() + wall_s)
    finally:
        os.close(read_fd)
    if data is None:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if data is None:
        raise DecodeRefused(f"decoding took over {wall_s:g} s")
    if not data:
        raise DecodeRefused(_death(os.waitstatus_to_exitcode(status), cpu_s))
    if data[:1] != _OK:
        raise DecodeRefused(data[1:].decode("utf-8", errors="replace")[:500])
    return data[1:]


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes, or None when `deadline` passes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _death(exitcode: int, cpu_s: float) -> str:
    if exitcode in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"decoding used over {cpu_s:g} s of CPU"
    return f"the decoder died (exit code {exitcode})"


def _child(
    write_fd: int,
    fn: Callable[..., bytes],
    args: tuple[Any, ...],
    cpu_s: float,
    memory_bytes: int,
) -> None:
    code = 0
    try:
        cpu = max(1, math.ceil(cpu_s))  # RLIMIT_CPU counts whole seconds
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        # Address space, counted from what the fork already maps (a bot with its models maps
        # gigabytes it will not touch here).
        with open("/proc/self/statm", "rb") as statm:
            mapped = int(statm.read().split()[0]) * _PAGE
        limit = mapped + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            payload = _OK + fn(*args)
        except MemoryError:
            payload = _REFUSED + f"decoding needed over {memory_bytes // 2**20} MiB".encode()
        except Exception as exc:
            payload = _REFUSED + (str(exc) or type(exc).__name__).encode()
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view) :]
    except BaseException:
        code = 1
    finally:
        os._exit(code)
