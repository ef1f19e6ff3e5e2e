"""Sessions: enable() / disable() over the extension, and where this process's dump
directory is. libtpuprof names it $TPUPROF_DIR/tpuprof_data_dev{D}-{N}.{PID}[.k] and maps its
session.tpc while the session records, so the directory is read from /proc/self/maps rather
than guessed."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Optional

from . import _tpuprof

_lock = threading.Lock()
_last_dir: Optional[str] = None  # the dump directory of this process's latest session


def _mapped_session_dir() -> Optional[str]:
    """The directory of the active session's session.tpc in this process, if mapped."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as maps:
            for line in maps:
                if line.endswith("/session.tpc\n"):
                    parts = line.rstrip("\n").split(None, 5)
                    if len(parts) == 6:
                        return os.path.dirname(parts[5])
    except OSError:
        pass
    return None


def _remember() -> Optional[str]:
    global _last_dir
    d = _mapped_session_dir()
    if d is not None:
        _last_dir = d
    return d


def _after_fork_in_child() -> None:
    # The child's session (if the parent was capturing) is its own, made on its first record.
    global _last_dir
    _last_dir = None


os.register_at_fork(after_in_child=_after_fork_in_child)


def enable(max_records: int = 0, mode: int = 1) -> Path:
    """Starts a capture session and returns its dump directory.

    max_records: per-thread record limit (0: TPUPROF_RECORD_SIZE, 1 048 576 by default);
    records beyond it are dropped and counted. mode: 0 times only, 1 adds names and meta
    text, 2 adds tensors, attributes, bytes/flops and source locations.
    Raises BusyError if a session is active (also the TPUPROF=... one), CaptureIOError if
    the dump directory cannot be made, ValueError / TypeError for bad arguments."""
    with _lock:
        _tpuprof.enable(max_records, mode)
        d = _remember()
    return Path(d) if d else Path(".")


def disable() -> Optional[Path]:
    """Ends the active session, writes its dump and returns the dump directory (None for a
    fork child's session that recorded nothing). Raises NotActiveError if no session is
    active, CaptureIOError if the dump could not be written (the live files stay there)."""
    with _lock:
        d = _remember()
        _tpuprof.disable()
        return Path(d) if d else None


def active() -> bool:
    """True while a capture session records (enable() or TPUPROF=0/1/2)."""
    return _tpuprof.mode() >= 0


def session_dir() -> Optional[Path]:
    """The dump directory of the active session, else of this process's latest one."""
    with _lock:
        d = _remember() if _tpuprof.mode() >= 0 else None
        d = d or _last_dir
    return Path(d) if d else None
