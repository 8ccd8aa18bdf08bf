"""The target process's jail (grader/harness/processes/jail.py, Landlock): what the code under grade may
not do even as root — read the reference or a classmate's files, write the grader or a results
file, reach the judge through /proc, signal it, open a TCP connection, run a program — and what
it still may: read its own folder, write its databases' folder."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT
from grader.harness.processes import jail
from grader.harness.judge.target_client import TargetProcess

pytestmark = pytest.mark.skipif(jail.abi() < 6, reason="needs Landlock ABI 6 (Linux 6.12+)")

PROBE = textwrap.dedent('''
    import json, os, socket, subprocess, sys, tempfile, threading

    def attempt(name, action, out):
        try:
            action()
            out[name] = "allowed"
        except Exception as exc:
            out[name] = type(exc).__name__

    def claim(conn, owner, now, lease_ms):
        places = json.loads(owner)
        out = {}
        attempt("read-reference", lambda: open(places["reference"]).read(), out)
        attempt("read-classmate", lambda: open(places["classmate"]).read(), out)
        attempt("write-grader", lambda: open(places["grader"], "a").close(), out)
        attempt("write-results", lambda: open(places["results"], "w").close(), out)
        attempt("judge-fds", lambda: os.listdir(f"/proc/{os.getppid()}/fd"), out)
        attempt("signal-judge", lambda: os.kill(os.getppid(), 0), out)
        attempt("connect", lambda: socket.create_connection(("127.0.0.1", places["port"]), 2), out)
        attempt("run-program", lambda: subprocess.run(["/bin/true"], check=True), out)
        attempt("start-process", fork, out)
        attempt("start-thread", lambda: threading.Thread(target=print).start(), out)
        attempt("read-database", lambda: open(places["database"], "rb").read(), out)
        attempt("write-database-folder",
                lambda: open(os.path.join(places["db"], "x"), "w").close(), out)
        attempt("read-own-folder", lambda: open(__file__).read(), out)
        attempt("write-own-scratch",
                lambda: open(os.path.join(tempfile.gettempdir(), "x"), "w").close(), out)
        attempt("read-stdlib", lambda: __import__("decimal"), out)
        return json.dumps(out)

    def fork():
        if os.fork() == 0:
            os._exit(0)

    def finish(conn, claim, now):
        return False

    def work_once(conn, owner, send, clock, lease_ms):
        return None
''')


def test_the_target_process_is_jailed(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "db").mkdir()
    (tmp_path / "classmate").mkdir()
    probe = tmp_path / "sub" / "probe.py"
    probe.write_text(PROBE)
    classmate = tmp_path / "classmate" / "queue.py"
    classmate.write_text("SECRET = 1\n")
    results = tmp_path / "results.json"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    places = {"reference": str(ROOT / "solutions" / "queue.py"), "classmate": str(classmate),
              "grader": str(ROOT / "grader" / "__init__.py"), "results": str(results),
              "port": listener.getsockname()[1], "db": str(tmp_path / "db"),
              "database": str(tmp_path / "db" / "queue.db")}
    before = (ROOT / "grader" / "__init__.py").read_bytes()
    try:
        with TargetProcess(str(probe), env={**os.environ, "LEASELAB_SEALED": "1"}) as target:
            assert target.contained >= 6
            target.open("c", tmp_path / "db" / "queue.db")
            got = json.loads(target.claim("c", json.dumps(places), 0, 1))
    finally:
        listener.close()
    assert got == {"read-reference": "PermissionError", "read-classmate": "PermissionError",
                   "write-grader": "PermissionError", "write-results": "PermissionError",
                   "judge-fds": "PermissionError", "signal-judge": "PermissionError",
                   "connect": "PermissionError",
                   # no new process at all (the seccomp filter: EAGAIN, as a process limit
                   # says), so no program either (Landlock would refuse running it); threads
                   # are the code's own business
                   "run-program": "BlockingIOError", "start-process": "BlockingIOError",
                   "start-thread": "allowed",
                   # the database is the judge's: its file and folder are out of reach
                   "read-database": "PermissionError", "write-database-folder": "PermissionError",
                   "read-own-folder": "allowed", "write-own-scratch": "allowed",
                   "read-stdlib": "allowed"}
    assert not results.exists() and (ROOT / "grader" / "__init__.py").read_bytes() == before


def test_a_package_on_the_way_to_a_dotted_target_runs_only_in_the_jail(tmp_path):
    """`--impl pkg.queue`: finding the file to let the jail read must not import `pkg` (its
    `__init__` would run before the jail, free to write anywhere the grader's user may)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (tmp_path / "own").mkdir()
    marker = tmp_path / "marker"
    (package / "__init__.py").write_text(textwrap.dedent(f'''
        try:
            open({str(marker)!r}, "w").close()  # outside the jail's writable folder
            WROTE = True
        except PermissionError:
            WROTE = False
    '''))
    (package / "queue.py").write_text(textwrap.dedent('''
        import pkg

        def claim(conn, owner, now, lease_ms):
            return "wrote" if pkg.WROTE else "refused"

        def finish(conn, claim, now):
            return False

        def work_once(conn, owner, send, clock, lease_ms):
            return None
    '''))
    with TargetProcess("pkg.queue", cwd=str(tmp_path), writable=[tmp_path / "own"]) as target:
        assert target.contained >= 6
        target.open("c", tmp_path / "own" / "queue.db")
        assert target.claim("c", "A", 0, 1) == "refused"
    assert not marker.exists()


#: A target in the folder that holds the grade's work root (grader.harness.processes.workroot), the
#: databases of its checks below it: it tries to read one.
IN_THE_WORK_ROOTS_FOLDER = '''
import json, os, sys
from grader.harness.processes import workroot
from grader.harness.judge.target_client import TargetProcess

probe = sys.argv[1]
database = os.path.join(workroot.make("check-"), "queue.db")
places = {"database": database, "db": os.path.dirname(database), "reference": probe,
          "classmate": probe, "grader": probe, "results": probe, "port": 9}
with TargetProcess(probe, env={**os.environ, "LEASELAB_SEALED": "1"}) as target:
    target.open("c", database)
    got = json.loads(target.claim("c", json.dumps(places), 0, 1))
print(json.dumps({"root": workroot.root(), "got": got}))
'''


def test_a_target_in_the_folder_holding_the_work_root_reads_only_its_own_file(tmp_path):
    """The grade's TMPDIR (where its work root is) holds the code under grade itself: the jail
    lets it read its own file, not its folder, so no check's database below the root (as for a
    target in the temporary folder or the RAM folder: sealing.readable)."""
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    proc = subprocess.run([sys.executable, "-c", IN_THE_WORK_ROOTS_FOLDER, str(probe)],
                          cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp_path),
                                         "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert os.path.dirname(report["root"]) == str(tmp_path)
    got = report["got"]
    assert (got["read-database"], got["write-database-folder"]) == \
        ("PermissionError", "PermissionError"), got
    assert got["read-own-folder"] == "allowed" and got["write-own-scratch"] == "allowed", got
