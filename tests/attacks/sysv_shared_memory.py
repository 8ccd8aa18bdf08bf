"""Creates System V shared memory segments of 256 MiB each at import: kernel objects outside
every folder, which would outlive the target (2.25 GiB left behind after a grade, more than a
target's memory limit) and carry data from one check, or one submission, to the next. Each
attempt leaves a file in LEASELAB_ATTACK_DIR naming the segment id it got (-1: refused) and the
errno. The queue itself is the stubs: its honest counterpart is lab/queue.py."""

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_IPC_CREAT, _IPC_PRIVATE, _SIZE = 0o1000, 0, 256 * 2 ** 20


def _grab(count: int = 9) -> None:
    out = os.environ.get("LEASELAB_ATTACK_DIR")
    for i in range(count):
        segment = _libc.shmget(_IPC_PRIVATE, ctypes.c_size_t(_SIZE), _IPC_CREAT | 0o600)
        errno = ctypes.get_errno()
        if out:
            with open(os.path.join(out, f"shm_{os.getpid()}_{i}_{segment}_{errno}"), "w"):
                pass


_grab()


def claim(conn, owner, now, lease_ms):
    raise NotImplementedError


def finish(conn, claim, now):
    raise NotImplementedError


def work_once(conn, owner, send, clock, lease_ms):
    raise NotImplementedError
