"""Report files a reader never sees half-written, and never sees stale.

`write_atomically` writes a temporary file in the same folder and renames it over the target
(`os.replace`): whoever opens the target gets the old file or the whole new one, never a
truncated one, even if the writer is killed. `remove_stale` is called before grading starts, so
a grade that is killed leaves no earlier results behind to be mistaken for its own.

Only regular files are replaced or removed: a destination that is something else (/dev/stdout,
a FIFO a CI step reads) is written to in place and never removed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path


def write_atomically(path: str | Path, text: str, *, newline: str | None = None) -> None:
    """Write `text` (UTF-8) to `path` through a temporary file beside it. `newline` as in open()
    ('' keeps the csv module's line endings). A character UTF-8 cannot hold (a lone surrogate:
    how Python keeps the bytes of a file name that is not UTF-8) is written as "?": every file
    the grader writes is UTF-8, whatever a submission's file names are."""
    path = Path(path)
    if _exists_but_not_regular(path):
        with open(path, "w", encoding="utf-8", errors="replace", newline=newline) as f:
            f.write(text)
        return
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: never follow or reuse a file someone else put there; 0o666 minus the umask, the
    # mode an ordinary write would give the target
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "w", encoding="utf-8", errors="replace", newline=newline) as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remove_stale(path: str | Path) -> None:
    """Remove `path` if it is a regular file (an earlier run's output)."""
    if not _exists_but_not_regular(Path(path)):
        Path(path).unlink(missing_ok=True)


def _exists_but_not_regular(path: Path) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # missing (or unreachable: the write will say why)
        return False
