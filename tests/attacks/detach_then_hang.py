"""Attack: at import, detach a grandchild (double fork + setsid) that waits and then writes a
marker (a stand-in for rewriting the gradebook after the batch), then hang, so that the batch
has to kill the whole grading of this submission at its --timeout.

LEASELAB_ATTACK_DIR says where the pid and the marker go; without it, a do-nothing queue. Where
the target process may start no process (its seccomp filter), the fork fails: it says so in a
`refused-PID` file, and hangs all the same."""

import os
import time

OUT = os.environ.get("LEASELAB_ATTACK_DIR")

def _fork() -> int:
    try:
        return os.fork()
    except OSError:
        with open(os.path.join(OUT, f"refused-{os.getpid()}"), "w"):
            pass
        return -1


if OUT:
    if _fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(os.path.join(OUT, f"pid-{os.getpid()}"), "w"):
                pass
            time.sleep(6.0)
            with open(os.path.join(OUT, f"marker-{os.getpid()}"), "w") as f:
                f.write("still alive after the batch\n")
            os._exit(0)
        os._exit(0)
    while True:
        time.sleep(1)


def claim(conn, owner, now, lease_ms):
    return None


def finish(conn, claim, now):
    return False


def work_once(conn, owner, send, clock, lease_ms):
    return None
