"""Who owns a run: the process that opened it, identified robustly against pid reuse.

An owner is the host name, the kernel's boot id, the pid namespace, the pid and the process's
start time (clock ticks after boot, ``/proc/<pid>/stat`` field 22). Host + boot id + pid
namespace say "this very kernel and process table"; pid + start time then name one process
only: a pid reused by a later process has another start time. Linux only (``/proc``): elsewhere
the parts it cannot read are ``unknown``, and an owner with an unknown part is never judged gone.
"""

from __future__ import annotations

import functools
import os
import socket
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OWNER_TAGS", "Owner", "process_start", "this_process"]

UNKNOWN = "unknown"
#: Field -> MLflow tag of every run the project opens.
OWNER_TAGS: dict[str, str] = {
    "host": "compressbench.owner.host",
    "boot_id": "compressbench.owner.boot_id",
    "pid_ns": "compressbench.owner.pid_ns",
    "pid": "compressbench.owner.pid",
    "start": "compressbench.owner.start_ticks",
}
_PROC = Path("/proc")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def process_start(pid: int, proc: Path = _PROC) -> str | None:
    """Start time of process ``pid`` in clock ticks after boot; None when no such live process
    (no entry, or a zombie: killed and not yet waited for)."""
    stat = _read(proc / str(pid) / "stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the command name may hold spaces and ')'
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]  # field 22 of stat; fields[0] is field 3 (the state)


@dataclass(frozen=True)
class Owner:
    """One process on one kernel (every field a string, ``unknown`` where unreadable)."""

    host: str
    boot_id: str
    pid_ns: str
    pid: str
    start: str

    def tags(self) -> dict[str, str]:
        return {tag: getattr(self, field) for field, tag in OWNER_TAGS.items()}

    @classmethod
    def from_tags(cls, tags: dict[str, str]) -> Owner | None:
        """The owner a run recorded; None for a run opened before owners were recorded."""
        if OWNER_TAGS["pid"] not in tags:
            return None
        return cls(**{field: tags.get(tag) or UNKNOWN for field, tag in OWNER_TAGS.items()})

    @property
    def label(self) -> str:
        return f"pid {self.pid} on host {self.host}"

    def shares_process_table(self, other: Owner) -> bool:
        """Same host, boot and pid namespace (all known): ``other``'s pid means the same here."""
        mine = (self.host, self.boot_id, self.pid_ns)
        return UNKNOWN not in mine and mine == (other.host, other.boot_id, other.pid_ns)

    def is_gone(self, here: Owner | None = None, proc: Path = _PROC) -> bool | None:
        """True when this owner provably no longer runs (its pid is free or names a process
        with another start time), False when it runs, None when ``here`` (default: this
        process) cannot tell: another host, boot or pid namespace, or an unknown part."""
        here = here or this_process()
        if not here.shares_process_table(self) or not self.pid.isdigit():
            return None
        if self.start == UNKNOWN:
            return None
        return process_start(int(self.pid), proc) != self.start


def this_process() -> Owner:
    """The owner identity of the running process (looked up again after a fork)."""
    return _owner(os.getpid())


@functools.cache
def _owner(pid: int) -> Owner:
    try:
        pid_ns = os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        pid_ns = UNKNOWN
    return Owner(
        host=socket.gethostname() or UNKNOWN,
        boot_id=_read(_PROC / "sys" / "kernel" / "random" / "boot_id") or UNKNOWN,
        pid_ns=pid_ns,
        pid=str(pid),
        start=process_start(pid) or UNKNOWN,
    )
