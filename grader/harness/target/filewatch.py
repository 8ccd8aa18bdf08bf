"""The file watched, in the target process: connections of its own that the code under grade
opens (or tries to) to the judge's databases, seen by an audit hook that cannot be removed and
cross-checked against /proc/self/fd, and reported in a reply's "own_connections" (`FileWatch`;
the process's one: `file_watch()`). How and why: docs/protocol.md, "The file watched".

A target-process module: it imports nothing of the judge's (tests/test_layers.py).
"""

from __future__ import annotations

import os
import sys

from grader.harness import wire


class FileWatch:
    """Connections to the server's databases that the server did not open (docs/protocol.md,
    "The file watched"). One per process: `install()` adds its audit hook."""

    def __init__(self):
        self.files: set[str] = set()  # real paths: the databases opened, with their side files
        self.inodes: set[tuple[int, int]] = set()  # (st_dev, st_ino) of those databases
        self.server_fds: set[int] = set()  # fds on those databases the server's connections hold
        self.opening = False  # the server is opening one of its own connections
        self.seen: list[str] = []  # recorded since the last take (distinct, at most wire.MAX_OWN)
        self.ignored: set[int] = set()  # during a nested call: the fds the outer ones opened
        # /proc/self/fd is listed (the cross-check) unless a jail denies the databases' folder:
        # then no descriptor on them can be opened here, and listing finds none
        self.descriptors = True
        # bound now: code under grade that patches os or os.path later does not change them
        self._stat, self._listdir, self._readlink = os.stat, os.listdir, os.readlink
        self._fstat = os.fstat
        self._realpath, self._join, self._getcwd = os.path.realpath, os.path.join, os.getcwd
        self._fspath = os.fspath

    def install(self) -> "FileWatch":
        sys.addaudithook(self._hook)
        return self

    # -- the server's own connections --------------------------------------------------------
    def open(self, connect):
        """`connect()` opens a connection of the server's: its path's fds are the server's."""
        before = self._fds()
        self.opening = True
        try:
            conn = connect()
        finally:
            self.opening = False
        self.server_fds |= {fd for fd, file in self._fds().items() if before.get(fd) != file}
        return conn

    def add(self, path: str) -> None:
        """`path` is a database the server opened (after it is opened: it exists)."""
        real = self._realpath(path)
        self.files.update(real + suffix for suffix in ("", "-journal", "-wal", "-shm"))
        try:
            st = self._stat(real)
            self.inodes.add((st.st_dev, st.st_ino))
        except OSError:
            pass

    def closed(self) -> None:
        """A connection of the server's was closed: forget its fds (those SQLite keeps open
        for a lock another connection holds stay the server's)."""
        now = self._fds()
        self.server_fds = {fd for fd in self.server_fds if now.get(fd) in self.inodes}

    # -- what the code under grade opened ----------------------------------------------------
    def enter(self, nested: bool):
        """A call of the code under grade starts; `nested`: inside another one's callback. What
        the outer call opened stays the outer call's (its reply says it): the state to give
        `leave`."""
        if not nested:
            return None
        self.scan()
        saved = (self.seen, self.ignored)
        self.seen = []
        if self.descriptors:
            self.ignored = self.ignored | {fd for fd, file in self._fds().items()
                                           if file in self.inodes and fd not in self.server_fds}
        return saved

    def leave(self, saved) -> list[str]:
        """The call ends: what it opened of its own (`take`); the outer call's state again."""
        own = self.take()
        if saved is not None:
            self.seen, self.ignored = saved
        return own

    def take(self) -> list[str]:
        """Scan the fds, then what was recorded since the last take (and forget it)."""
        self.scan()
        seen, self.seen = self.seen, []
        return seen

    def scan(self) -> None:
        if not self.inodes or not self.descriptors:
            return
        # the server's own fds and the outer calls' are never recorded: not even looked at
        for fd, file in self._fds(skip=self.server_fds | self.ignored).items():
            if file in self.inodes:
                try:
                    self._record(self._readlink(f"/proc/self/fd/{fd}"))
                except OSError:
                    pass

    def _hook(self, event: str, args: tuple) -> None:
        if event != "sqlite3.connect" or self.opening or not self.files:
            return
        try:
            for path in self._candidates(args[0]):
                if self._is_database(path):
                    self._record(path)
                    return
        except BaseException:  # never fail the connect itself
            pass

    def _candidates(self, database) -> list[str]:
        """The file(s) `database` may name: as a path, and as a file: URI's path."""
        name = self._fspath(database)
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        if type(name) is not str or name in ("", ":memory:"):
            return []
        names = [name]
        if name.startswith("file:"):
            from urllib.parse import unquote

            rest = name[5:].split("#", 1)[0].split("?", 1)[0]
            if rest.startswith("//"):  # file://host/path: the path
                slash = rest.find("/", 2)
                rest = rest[slash:] if slash >= 0 else ""
            if rest and rest != ":memory:":
                names.append(unquote(rest))
        return [self._realpath(self._join(self._getcwd(), n)) for n in names]

    def _is_database(self, real: str) -> bool:
        if real in self.files:
            return True
        try:
            st = self._stat(real)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) in self.inodes

    def _record(self, path: str) -> None:
        if path not in self.seen and len(self.seen) < wire.MAX_OWN:
            self.seen.append(wire.bounded(path, wire.MAX_MESSAGE))

    def _fds(self, skip: set[int] | frozenset = frozenset()) -> dict[int, tuple[int, int]]:
        """{fd: (st_dev, st_ino)} of the open fds but those in `skip` (not the one listdir
        itself used a moment ago: it is closed by the time it is looked at); {} where /proc
        cannot be read. fstat: the file an fd is open on, as a stat of /proc/self/fd/N would
        follow it there, without walking that path."""
        found = {}
        try:
            names = self._listdir("/proc/self/fd")
        except OSError:
            return found
        for name in names:
            try:
                fd = int(name)
                if fd in skip:
                    continue
                st = self._fstat(fd)
                found[fd] = (st.st_dev, st.st_ino)
            except (OSError, ValueError):
                pass
        return found


#: The process's FileWatch (its audit hook cannot be removed: installed once, by `serve`).
_file_watch: FileWatch | None = None


def file_watch() -> FileWatch:
    global _file_watch
    if _file_watch is None:
        _file_watch = FileWatch().install()
    return _file_watch
