"""Who runs a trial: owners, heartbeats and orphans.

Several processes may run one study. Each trial records its owner ("host:pid:token") and
a heartbeat that the owner refreshes every HEARTBEAT_S; a running trial whose owner's
process is gone (same host) or whose heartbeat is older than STALE_S is an orphan, which
the next process to start marks `interrupted` and re-runs.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from storage.records import TrialRecord

HEARTBEAT_S = 10.0  # how often a driver refreshes its running trials
STALE_S = 120.0  # a running trial without a heartbeat for this long is an orphan


def owner_id() -> str:
    """ "host:pid:token" of this process (the token tells apart reused pids)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_orphan(trial: TrialRecord, now: datetime | None = None) -> bool:
    """No live process runs this trial: no owner, its owner's process is gone (same
    host), or its heartbeat is older than STALE_S."""
    if not trial.owner:
        return True
    host, _, rest = trial.owner.partition(":")
    pid = rest.partition(":")[0]
    if host == socket.gethostname() and pid.isdigit() and not _pid_alive(int(pid)):
        return True
    now = now or datetime.now(UTC)
    return trial.heartbeat_at is None or (now - trial.heartbeat_at).total_seconds() > STALE_S


class Heartbeat:
    """A daemon thread that calls `beat(numbers)` every `every` seconds with the trial
    numbers this process runs now (`running()`); a failed beat is skipped, the next one
    retries."""

    def __init__(
        self, beat: Callable[[list[int]], None], running: Callable[[], Iterable[int]], every: float = HEARTBEAT_S
    ) -> None:
        self.beat, self.running, self.every = beat, running, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="search-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.beat(list(self.running()))
            except Exception:  # a missed beat is harmless; the next one retries
                pass

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
