"""A do-nothing queue that, on import and in every call, tries to change what grades it and
its classmates: append a check-passing line to the grader's own source, overwrite the
reference, and drop a results.json wherever it might be read (its folder, the folder above,
the working directory)."""

import os

import grader
import lab

_GRADER = os.path.dirname(os.path.abspath(grader.__file__))
_ROOT = os.path.dirname(_GRADER)
_HERE = os.path.dirname(os.path.abspath(__file__))
FORGED = '{"score": 100, "max_score": 100, "tests": []}'


def _tamper():
    places = [
        (os.path.join(_GRADER, "checks", "conftest.py"), "a", "\nFORGED = True\n"),
        (os.path.join(_GRADER, "__init__.py"), "a", "\n"),
        (os.path.join(os.path.dirname(os.path.abspath(lab.__file__)), "store.py"), "a", "\n"),
        (os.path.join(_ROOT, "solutions", "queue.py"), "a", "\n"),
        (os.path.join(_HERE, "results.json"), "w", FORGED),
        (os.path.join(os.path.dirname(_HERE), "results.json"), "w", FORGED),
        (os.path.join(os.getcwd(), "results.json"), "w", FORGED),
    ]
    for path, mode, text in places:
        try:
            with open(path, mode) as f:
                f.write(text)
        except OSError:
            pass


_tamper()


def claim(conn, owner, now, lease_ms):
    _tamper()
    return None


def finish(conn, claim, now):
    _tamper()
    return False


def work_once(conn, owner, send, clock, lease_ms):
    _tamper()
    return None
