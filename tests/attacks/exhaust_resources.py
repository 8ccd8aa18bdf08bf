"""Attack (or an honest bug): take the machine from the others. LEASELAB_ATTACK says how:
`memory` (ask for 8 GiB), `disk` (write a file without end), `cpu` (spin in four threads).
Otherwise a do-nothing queue."""

import os
import threading

HOW = os.environ.get("LEASELAB_ATTACK")


def claim(conn, owner, now, lease_ms):
    if HOW == "memory":
        hoard = bytearray(8 * 1024 ** 3)
        return hoard
    if HOW == "disk":
        with open(os.path.join(os.environ["LEASELAB_ATTACK_DIR"], "fill.bin"), "wb") as f:
            while True:
                f.write(b"\0" * (1024 * 1024))
    if HOW == "cpu":
        for _ in range(4):
            threading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start()
        while True:
            pass
    return None


def finish(conn, claim, now):
    return False


def work_once(conn, owner, send, clock, lease_ms):
    return None
