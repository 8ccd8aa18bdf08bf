"""Contain the target process, and the judges, with Landlock (Linux >= 5.13), as root or as any user.

`enter(read, write)` is called by the target server after the channel is set up and before the
code under grade is imported. From then on that process, and every process it starts, may:

- read (and map: shared libraries load through open, which is all Landlock sees) files only
  under `read`: the Python installation, the system's libraries,
  the grader's `grader/` and `lab/` packages and the folder of the code under grade — not the
  reference (`solutions/`), not the project's tests, not another submission, not /proc beyond
  its own entry (so not the judge's descriptors through /proc/PID/fd), not any results file;
- write, create and remove files only under `write` (the check's database folders) and
  /dev/null;
- execute nothing (no new programs);
- connect or bind no TCP socket (ABI >= 4): `send` is the judge's, the target needs no network;
- signal no process outside its own sandbox, nor reach an abstract Unix socket outside it
  (ABI >= 6): it cannot kill or stop the judge;
- ptrace no process outside its sandbox (every ABI);
- start no process: fork, vfork and a clone that is not a thread fail with EAGAIN, as a
  process limit of zero would say (`deny_sysv_ipc`'s seccomp filter, the same one; threads are
  allowed), so no fork bomb, and nothing of the code under grade can outlive it;
- create, attach or use no System V IPC object (shared memory, semaphores, message queues:
  `deny_sysv_ipc`, a seccomp filter): they live in the kernel, outside every folder, and would
  outlive the target (2 GiB of shared memory left behind after a grade) and carry data from one
  check, or one submission, to the next.

Landlock is a stacking LSM for unprivileged sandboxing: it holds against root too (it does not
depend on file ownership), and it cannot be lifted once entered. Where the kernel has no
Landlock (or an older ABI) `enter` does what the ABI allows and returns the ABI (0: nothing):
the target server tells the judge in its "ready" message, and the threat model in
docs/instructors.md says what then still holds.

`enter_judge(write)` is the judges' jail, lighter: the code's SQL runs on the judge's connections,
in the judge's process (a lane of the runner, a forked judge: grader.harness.processes.sandbox), so that
process may change files only beneath its own work folder (and write /dev/null): make, write,
truncate, rename or link into, remove. It still reads and executes anything, and its network and
signals are its own (it listens on loopback for the integration run's workers, and kills its
targets, which are the zygote's children). Where the kernel has no Landlock (`available` is 0) a
grade says so once (grader.cli.unjailed_note).
"""

from __future__ import annotations

import os
import struct
import sys

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on every arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_*
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
# LANDLOCK_ACCESS_NET_* (ABI 4) and LANDLOCK_SCOPE_* (ABI 6)
_NET_ALL = (1 << 0) | (1 << 1)
_SCOPE_ALL = (1 << 0) | (1 << 1)

READ = READ_FILE | READ_DIR
WRITE = (READ | WRITE_FILE | REMOVE_FILE | REMOVE_DIR | MAKE_DIR | MAKE_REG | TRUNCATE)

#: System folders every Python program reads (shared libraries, time zones, locale data).
SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/etc", "/opt")
DEVICES_RW = ("/dev/null",)
DEVICES_R = ("/dev/urandom", "/dev/random", "/dev/zero")


# ctypes is imported where it is used, not at the top: a target process of the portable path
# on a system without Landlock or seccomp (Windows, macOS) never needs it, and every one of
# them is a fresh interpreter that would import it (issue 42).
_libc: ctypes.CDLL | None = None


def c_library() -> ctypes.CDLL:
    """The C library (its prctl and syscall), loaded once per process: the zygote's children
    use the zygote's rather than each loading it again. Raises OSError or AttributeError as
    ctypes does where there is none."""
    import ctypes

    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL(None, use_errno=True)
        except TypeError:  # Windows: no C library to load by None
            raise OSError("no C library to load here") from None
        lib.prctl, lib.syscall  # noqa: B018  (their function pointers, looked up once too)
        _libc = lib
    return _libc


_abi: int | None = None


def abi() -> int:
    """The kernel's Landlock ABI version (0: none); asked once per process (the zygote asks
    before it forks: its children have the answer)."""
    import ctypes

    global _abi
    if _abi is None:
        try:
            libc = c_library()
            version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                                   ctypes.c_uint32(_CREATE_RULESET_VERSION))
        except (OSError, AttributeError):
            version = 0
        _abi = max(0, int(version))
    return _abi


def prepare() -> None:
    """What entering the jail needs that is the same for every target (the Landlock ABI, the
    seccomp program): made once, by a zygote before it forks its targets."""
    abi()
    _seccomp_program()


def python_folders() -> list[str]:
    """Where this interpreter's standard library and installed packages live."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    folders.update(p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p)
    return sorted(folders)


def available() -> int:
    """The Landlock ABI a process here can enter (0: none: not Linux, or no Landlock in the
    kernel). The grading process asks it to say once that its judges are not jailed."""
    return abi() if sys.platform.startswith("linux") else 0


def fs_rights(version: int) -> int:
    """Every file system right Landlock ABI `version` can handle."""
    return _FS_BY_ABI[max(k for k in _FS_BY_ABI if k <= version)]


def enter(read: list[str], write: list[str]) -> int:
    """Restrict this process (and its future children) as the module docstring says; returns
    the Landlock ABI used (0: the kernel has none, nothing was restricted)."""
    version = available()
    if version <= 0:
        return 0
    handled = [fs_rights(version)]
    if version >= 4:
        handled.append(_NET_ALL)
    if version >= 6:
        handled.append(_SCOPE_ALL)
    own = f"/proc/{os.getpid()}"  # its own /proc entry (its fds, its maps), no other
    grants = [(path, READ) for path in (*SYSTEM, *python_folders(), own, *read)]
    grants += [(path, READ_FILE) for path in DEVICES_R]
    grants += [(path, READ_FILE | WRITE_FILE) for path in DEVICES_RW]
    grants += [(path, WRITE) for path in write]
    return version if _restrict(handled, grants) else 0


#: The rights the judge's jail handles (`enter_judge`): every one that changes the file
#: system (write, truncate, make, remove, rename or link into: REFER from ABI 2, TRUNCATE from
#: ABI 3), none that reads or executes.
JUDGE_WRITES = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
                | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM | REFER | TRUNCATE)


def enter_judge(write: list[str]) -> int:
    """The judge's jail (a lane, a forked judge: the processes that run the code's SQL on the
    judge's connections): from now on this process and every process it starts may change
    files only beneath `write` (its own work folder) and write /dev/null. Reading, executing
    (a target spawned where the zygote cannot fork one), the network (the integration run's
    receiver on loopback) and signals (its targets are the zygote's children) are left as they
    were. Returns the Landlock ABI used (0: none, nothing was restricted; `available`)."""
    version = available()
    if version <= 0:
        return 0
    handled = fs_rights(version) & JUDGE_WRITES
    grants = [(path, WRITE_FILE | TRUNCATE) for path in DEVICES_RW]
    grants += [(path, JUDGE_WRITES) for path in write]
    return version if _restrict([handled], grants) else 0


def _restrict(handled: list[int], grants: list[tuple[str, int]]) -> bool:
    """Restrict this process to a Landlock ruleset that handles `handled` (struct
    landlock_ruleset_attr's fields in order: file system rights, then network, then scopes) and
    grants each (path, access) beneath its path; False if the kernel made no ruleset."""
    import ctypes

    libc = c_library()
    attr = struct.pack("=" + "Q" * len(handled), *handled)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(_SYS_CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        for path, access in grants:
            _allow(libc, ruleset, path, access & handled[0])
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return True


def _allow(libc, ruleset: int, path: str, access: int) -> None:
    """Grant `access` beneath `path` (a missing path is skipped; a file gets file rights)."""
    import ctypes

    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= READ_FILE | WRITE_FILE | EXECUTE | TRUNCATE | IOCTL_DEV
        attr = struct.pack("=Qi", access, fd)  # struct landlock_path_beneath_attr, packed
        buffer = ctypes.create_string_buffer(attr, len(attr))
        if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                        buffer, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    finally:
        os.close(fd)


# seccomp (Linux >= 3.5): a BPF filter on the system call number, checked against the arch.
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM = 1
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JSET_K, _BPF_RET_K = 0x20, 0x15, 0x45, 0x06
_X32_BIT = 0x40000000  # x86_64's x32 ABI: the same calls under other numbers
#: AUDIT_ARCH_* -> the System V IPC calls' numbers on that arch (every other call is allowed).
SYSV_IPC_CALLS = {
    0xC000003E: (29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220),  # x86_64
    0xC00000B7: tuple(range(186, 198)),                                # aarch64: msgget..shmdt
}


#: AUDIT_ARCH_* -> the calls that reach past every folder's rules, which the code under grade
#: has no use for: the kernel's key rings (add_key, request_key, keyctl: a key in the user's
#: ring outlives the target and is read by the next submission's) and the calls that change a
#: file's metadata without writing to it (chmod, chown, utime and the extended attributes, in
#: every form: Landlock does not rule on them, and the files the target may read are the
#: grader's own). Each fails with EPERM.
BEYOND_FOLDERS_CALLS = {
    0xC000003E: (248, 249, 250,                                   # add_key request_key keyctl
                 90, 91, 92, 93, 94, 260, 268, 452,               # chmod fchmod chown ... fchmodat2
                 132, 235, 261, 280,                               # utime utimes futimesat utimensat
                 188, 189, 190, 197, 198, 199),                    # setxattr ... fremovexattr
    0xC00000B7: (217, 218, 219, 52, 53, 54, 55, 452, 88, 5, 6, 7, 14, 15, 16),
}


#: AUDIT_ARCH_* -> the calls that start a process: clone (a thread when its flags hold
#: CLONE_THREAD), clone3 (its flags are in memory a filter cannot read) and fork / vfork.
PROCESS_CALLS = {
    0xC000003E: {"clone": 56, "clone3": 435, "fork": (57, 58)},  # x86_64
    0xC00000B7: {"clone": 220, "clone3": 435, "fork": ()},       # aarch64
}
CLONE_THREAD = 0x00010000
_EAGAIN, _ENOSYS = 11, 38
_ARGS0 = 16  # offsetof(struct seccomp_data, args[0]): its low 32 bits on a little-endian arch


def target_filter(arch: int) -> list[tuple[int, int, int, int]]:
    """The BPF program (code, jt, jf, k) of the target process, on `arch`:
    - every System V IPC call fails with EPERM (and on x86_64 every x32 call), and so does
      every call of BEYOND_FOLDERS_CALLS (the key rings, a file's metadata);
    - no new process: fork and vfork fail with EAGAIN (what a process limit gives), clone
      without CLONE_THREAD too, clone3 with ENOSYS (so the C library starts a thread with
      clone instead, which is allowed: the code under grade may use threads);
    - everything else goes through. On another arch everything goes through (nothing is known
      to deny there)."""
    sysv = SYSV_IPC_CALLS.get(arch, ())
    processes = PROCESS_CALLS.get(arch)
    code: list[tuple] = [("ld", 4), ("jeq", arch, None, "allow"), ("ld", 0)]
    if arch == 0xC000003E:
        code.append(("jset", _X32_BIT, "eperm", None))
    code += [("jeq", number, "eperm", None)
             for number in (*sysv, *BEYOND_FOLDERS_CALLS.get(arch, ()))]
    if processes is not None:
        code.append(("jeq", processes["clone3"], "enosys", None))
        code += [("jeq", number, "eagain", None) for number in processes["fork"]]
        code += [("jeq", processes["clone"], None, "allow"), ("ld", _ARGS0),
                 ("jset", CLONE_THREAD, "allow", "eagain")]
    code += [("label", "allow"), ("ret", _SECCOMP_RET_ALLOW),
             ("label", "eperm"), ("ret", _SECCOMP_RET_ERRNO | _EPERM),
             ("label", "eagain"), ("ret", _SECCOMP_RET_ERRNO | _EAGAIN),
             ("label", "enosys"), ("ret", _SECCOMP_RET_ERRNO | _ENOSYS)]
    return _assemble(code)


def sysv_ipc_filter(arch: int) -> list[tuple[int, int, int, int]]:
    """The target's filter (`target_filter`; the name its first part had)."""
    return target_filter(arch)


def _assemble(code: list[tuple]) -> list[tuple[int, int, int, int]]:
    """Symbolic BPF (ld OFFSET, jeq/jset K TRUE FALSE with labels or None: the next, ret K,
    label NAME) to (code, jt, jf, k)."""
    where, at = {}, 0
    for item in code:
        if item[0] == "label":
            where[item[1]] = at
        else:
            at += 1
    program, at = [], 0
    for item in code:
        if item[0] == "label":
            continue
        if item[0] == "ld":
            program.append((_BPF_LD_W_ABS, 0, 0, item[1]))
        elif item[0] == "ret":
            program.append((_BPF_RET_K, 0, 0, item[1]))
        else:
            kind, k, true, false = item
            jumps = [0 if label is None else where[label] - at - 1 for label in (true, false)]
            program.append((_BPF_JEQ_K if kind == "jeq" else _BPF_JSET_K, *jumps, k))
        at += 1
    return program


def native_arch() -> int | None:
    """This process's AUDIT_ARCH_* value, where a filter for it is known; else None."""
    if not hasattr(os, "uname"):  # Windows
        return None
    return {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(os.uname().machine)


_program: tuple | None = None  # (struct sock_fprog, the filter array it points to) or ()


def _seccomp_program() -> tuple:
    """The target's filter as the kernel takes it, built once per process; () where there is
    none (not Linux, an unknown arch)."""
    global _program
    if _program is None:
        arch = native_arch()
        if arch is None or not sys.platform.startswith("linux"):
            _program = ()
        else:
            import ctypes

            class SockFprog(ctypes.Structure):  # struct sock_fprog
                _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

            program = target_filter(arch)
            filters = (ctypes.c_uint64 * len(program))(
                *[int.from_bytes(struct.pack("=HBBI", *f), "little") for f in program])
            _program = (SockFprog(len(program), ctypes.cast(filters, ctypes.c_void_p)),
                        filters)
    return _program


_PR_CAPBSET_DROP = 24
_CAPABILITY_VERSION_3 = 0x20080522  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words a set
_LAST_CAPABILITY = 63


def drop_capabilities() -> bool:
    """Give up every capability this process has, for good: each taken out of the bounding set
    (none can come back, not by a program run with privileges: none can be run either), then
    the effective, permitted and inheritable sets emptied (the ambient set with them). A grader
    run as root (a container, a CI runner, Gradescope) otherwise lends them to the code under
    grade: the immutable flag on a file no clean-up can then remove, raw sockets, a watch on
    every file of the machine (fanotify), the kernel's log, a higher scheduling priority than
    the classmate graded beside it. False where it cannot be done (not Linux, no C library)."""
    import ctypes

    try:
        libc = c_library()
        capset = libc.capset
    except (OSError, AttributeError):
        return False
    for capability in range(_LAST_CAPABILITY + 1):  # EINVAL past the kernel's last: ignored
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # {effective, permitted, inheritable} x 2: all empty
    return capset(header, data) == 0


def deny_sysv_ipc() -> bool:
    """Install the target's seccomp filter on this process (and every process it starts): no
    System V IPC, no new process (`target_filter`); False where it cannot be (not Linux, an
    unknown arch, no seccomp): the threat model says so."""
    program = _seccomp_program()
    if not program:
        return False
    import ctypes

    try:
        libc = c_library()
    except (OSError, AttributeError):
        return False
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program[0]), 0, 0) == 0
