"""Stop a server a test started."""

from __future__ import annotations

import subprocess


def stop(proc: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM, then SIGKILL if ``proc`` has not exited within ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
