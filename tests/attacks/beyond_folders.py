"""Reaches past every folder's rules at import, with what a grader run as root would lend it:
changes the metadata of a file it may not write (LEASELAB_ATTACK_CANARY: its mode, its times,
an extended attribute; owned by the grader's own user, so no ownership stops it), and leaves a
key in the user's key ring (which outlives the target, and which the next submission graded by
the same user would read). Each attempt leaves a file in LEASELAB_ATTACK_DIR named after what it
tried and the errno it got (0: it worked), and one naming the capabilities it holds (CapEff).
The queue itself is the stubs: its honest counterpart is lab/queue.py."""

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_KEYCTL_GET_KEYRING_ID, _USER_KEYRING = 0, -4


def _attempt(name, call):
    try:
        call()
        code = 0
    except OSError as exc:
        code = exc.errno or -1
    return name, code


def _syscall(*args):
    if _libc.syscall(*args) < 0:
        raise OSError(ctypes.get_errno(), "syscall")


def _reach() -> None:
    out, canary = os.environ.get("LEASELAB_ATTACK_DIR"), os.environ.get("LEASELAB_ATTACK_CANARY")
    if not out or not canary:
        return
    tries = [_attempt("chmod", lambda: os.chmod(canary, 0o600)),
             _attempt("utime", lambda: os.utime(canary, (0, 0))),
             _attempt("setxattr", lambda: os.setxattr(canary, "user.attack", b"1")),
             _attempt("add_key", lambda: _syscall(248, b"user", b"attack", b"1", 1,
                                                   _USER_KEYRING)),
             _attempt("keyctl", lambda: _syscall(250, _KEYCTL_GET_KEYRING_ID, _USER_KEYRING,
                                                  0))]
    for name, code in tries:
        with open(os.path.join(out, f"try_{name}_{code}"), "w"):
            pass
    status = open("/proc/self/status").read()
    effective = next(line.split()[1] for line in status.splitlines()
                     if line.startswith("CapEff"))
    with open(os.path.join(out, f"caps_{effective}"), "w"):
        pass


_reach()


def claim(conn, owner, now, lease_ms):
    raise NotImplementedError


def finish(conn, claim, now):
    raise NotImplementedError


def work_once(conn, owner, send, clock, lease_ms):
    raise NotImplementedError

