"""How a target process starts: what a launcher is, the variable that chooses one, and `spawn`.

A launcher takes `(spec, *, python, cwd, env, log)` and starts the target server
(`grader.harness.target.server`) for the code `spec` names; it returns (process, the fd the
judge writes requests to, the fd it reads messages from). There are three: `spawn` here (a fresh
interpreter), `grader.harness.processes.zygote.launch` (forked by the zygote, else spawned) and
`zygote.launch_forked` (forked, or ZygoteUnavailable). `TargetProcess` takes one, or the one
`LAUNCH_ENV` names (`target_client.default_launcher`).

The imports go one way: target_client -> zygote -> launch; this module imports no grader module.
"""

from __future__ import annotations

import os
import subprocess
import sys

#: What of the judge's environment a target process gets: what an interpreter reads at start-up
#: (PYTHON*, LC_*, LANG, HOME), PATH and TZ, the sealing flag, and the attack tests' knobs. No
#: PYTEST_CURRENT_TEST (the check's name), nothing else that could tell one check from another.
#: On Windows an interpreter cannot even start without SYSTEMROOT (it seeds its hashes from the
#: system's random source, found through it: "Fatal Python error: _Py_HashRandomization_Init");
#: WINDIR, SYSTEMDRIVE, USERPROFILE (Windows' HOME) and PATHEXT are read at start-up there too.
#: Windows spells its variables in capitals in os.environ, as here.
KEPT_PREFIXES = ("PYTHON", "LC_", "LEASELAB_ATTACK")
KEPT_NAMES = ("LANG", "HOME", "PATH", "TZ", "LEASELAB_SEALED",
              "SYSTEMROOT", "WINDIR", "SYSTEMDRIVE", "USERPROFILE", "PATHEXT")


def scrubbed(env) -> dict:
    """The environment a target process starts with (see KEPT_*): the judge's
    (grader.harness.judge.target_client), and a spawned lane's first spare
    (grader.harness.processes.portable.main), which must match it."""
    return {k: v for k, v in env.items()
            if k in KEPT_NAMES or k.startswith(KEPT_PREFIXES)}


#: How target processes start when TargetProcess is given no launcher: "spawn" (a fresh
#: interpreter each), "zygote" (forked by the zygote; an error if it cannot run) or "auto" (the
#: zygote where it can run, else spawn). The default is auto.
LAUNCH_ENV = "LEASELAB_TARGET_LAUNCH"


def spawn(spec: str, *, python: str = sys.executable, cwd: str | None = None,
          env: dict | None = None, log: str | None = None):
    """A launcher: start the target server in a fresh interpreter. Returns (process, the fd the
    judge writes requests to, the fd it reads messages from). Every launcher returns that; its
    process has `pid`, `returncode`, `poll()` and `wait(timeout)` as a Popen; a process that is
    not a Popen has `kill_group()` (kill its process group and know it dead: close) and
    `kill_now()` (SIGKILL its process group from any thread, signal only: kill) as well."""
    to_target, out = os.pipe()
    in_, from_target = os.pipe()
    log_file = open(log, "ab") if log else subprocess.DEVNULL
    try:
        process = subprocess.Popen(
            [python, "-m", "grader.harness.target",
             "--in", str(to_target), "--out", str(from_target), spec],
            pass_fds=(to_target, from_target), stdin=subprocess.DEVNULL,
            stdout=log_file, stderr=log_file, cwd=cwd, env=env, start_new_session=True,
            close_fds=True)
    except BaseException:
        os.close(in_)
        os.close(out)
        raise
    finally:
        os.close(to_target)
        os.close(from_target)
        if log:
            log_file.close()
    return process, out, in_
