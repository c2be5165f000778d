"""Run the app under ``strace`` and list what it tried to do that it must not.

Two kinds of violation:

* network: any ``connect``/``sendto``/``sendmsg`` on an internet socket (AF_INET/AF_INET6,
  or a TCP/UDP socket in strace's fd decoration), DNS lookups included, and lookups through
  the local name-service daemons (nscd, systemd-resolved) that would do DNS on its behalf.
  Unix sockets to PulseAudio, X11 and D-Bus are local and fine.
* files: any file opened for writing, created, renamed or linked outside the allowed roots
  (the app's own folders, the paths the user named, and the few places the OS's audio
  stack needs: see ``allowed_roots``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SYSCALLS = (
    "connect,sendto,sendmsg,sendmmsg,"
    "open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat"
)
_CALL = re.compile(r"^(?:\[pid\s+)?\d*\]?\s*(?P<name>\w+)\((?P<args>.*)$")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DIRFD = re.compile(r"^(?:AT_FDCWD|-?\d+)(?:<(?P<dir>[^>]*)>)?,\s*")
_INET = re.compile(r"AF_INET6?\b|<(?:TCP|UDP|TCPv6|UDPv6|UDPLITE)(?::|>)")
_NAME_SERVICES = ("/var/run/nscd/socket", "/run/nscd/socket", "/run/systemd/resolve/")
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")
_OPENS = {"open", "openat", "creat"}
_MKDIRS = {"mkdir", "mkdirat"}
_MOVES = {"rename", "renameat", "renameat2", "link", "linkat"}
_SYMLINKS = {"symlink", "symlinkat"}


@dataclass(frozen=True)
class Traced:
    returncode: int
    stdout: str
    stderr: str
    lines: list[str]


def strace_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean user: HOME and every XDG folder in ``home``, no bytecode writes."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HANASU_", "XDG_", "ORT_", "HF_")) and key != "DO_NOT_TRACK"
    }
    runtime = home / "run"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_RUNTIME_DIR": str(runtime),
            "TMPDIR": str(home / "tmp"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    (home / "tmp").mkdir(exist_ok=True)
    env.update(extra or {})
    return env


def app_dirs(home: Path) -> list[Path]:
    """The app's own folders for ``strace_env(home)`` (platformdirs on Linux)."""
    return [
        home / ".config" / "hanasu",
        home / ".local" / "share" / "hanasu",
        home / ".local" / "state" / "hanasu",
        home / ".cache" / "hanasu",
    ]


def font_caches(home: Path) -> list[Path]:
    """fontconfig's cache folders: the system's (root), the user's and its legacy one."""
    return [Path("/var/cache/fontconfig"), home / ".cache" / "fontconfig", home / ".fontconfig"]


def allowed_roots(home: Path, named: Iterable[Path] = ()) -> list[Path]:
    """Where the app may write: its own folders, the user's named paths, and:

    * ``/dev/``: device nodes (the sound card, ``/dev/null``, ``/dev/tty``) and the kernel's
      shared memory (``/dev/shm``: Python's multiprocessing semaphores, JACK's registry
      when PortAudio probes it); nothing there reaches a disk.
    * ``$XDG_CONFIG_HOME/pulse`` and ``$XDG_RUNTIME_DIR``: the PulseAudio client library's
      own cookie and session socket link, needed to talk to the local sound server.
    * fontconfig's cache of the installed fonts (``/var/cache/fontconfig`` when run as root,
      else ``$XDG_CACHE_HOME/fontconfig``; it also tries ``~/.fontconfig``): any program
      that draws text refreshes it when fonts were installed since it was last built (a
      fresh machine right after ``apt-get install``). It lists the system's font files,
      nothing of the user's.
    """
    roots = [*app_dirs(home), *named, Path("/dev"), home / ".config" / "pulse", home / "run",
             *font_caches(home)]
    return [Path(os.path.normpath(root)) for root in roots]


def _command(
    args: Sequence[str], trace_file: Path, program: Sequence[str] | None = None
) -> list[str]:
    app = list(program) if program else [sys.executable, "-m", "app"]
    return [
        "strace",
        "-f",
        "-qq",
        "-yy",
        "-s",
        "4096",
        "-e",
        f"trace={SYSCALLS}",
        "-o",
        str(trace_file),
        *app,
        *args,
    ]


def run_traced(
    args: Sequence[str],
    env: Mapping[str, str],
    trace_file: Path,
    timeout: float,
    program: Sequence[str] | None = None,
) -> Traced:
    """``python -m app ARGS`` (or ``program ARGS``) under ``strace -f``, until it exits."""
    done = subprocess.run(
        _command(args, trace_file, program),
        cwd=REPO,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    lines = trace_file.read_text(encoding="utf-8", errors="replace").splitlines()
    return Traced(done.returncode, done.stdout, done.stderr, lines)


def run_traced_until(
    args: Sequence[str],
    env: Mapping[str, str],
    trace_file: Path,
    ready: Callable[[], bool],
    timeout: float,
    linger_s: float = 3.0,
) -> Traced:
    """``python -m app ARGS`` under ``strace -f`` until ``ready()``, ``linger_s`` more
    seconds, then SIGTERM to the app (not to strace, which would only detach)."""
    proc = subprocess.Popen(
        _command(args, trace_file),
        cwd=REPO,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(linger_s)
        for child in _children(proc.pid):
            os.kill(child, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = trace_file.read_text(encoding="utf-8", errors="replace").splitlines()
    return Traced(proc.returncode, stdout, stderr, lines)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def network_attempts(lines: Iterable[str]) -> list[str]:
    found = []
    for line in lines:
        match = _CALL.match(line)
        if match is None or not match["name"].startswith(("connect", "send")):
            continue
        args = match["args"]
        if _INET.search(args) or any(service in args for service in _NAME_SERVICES):
            found.append(line)
    return found


def _unescape(text: str) -> str:
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _path(args: str, with_dirfd: bool) -> tuple[str, str] | None:
    """(path, rest of the arguments) of the first path argument, made absolute."""
    base = str(REPO)
    if with_dirfd:
        fd = _DIRFD.match(args)
        if fd is None:
            return None
        base = fd["dir"] or base
        args = args[fd.end() :]
    quoted = _QUOTED.match(args)
    if quoted is None:
        return None
    path = _unescape(quoted[1])
    return os.path.normpath(os.path.join(base, path)), args[quoted.end() :].lstrip(", ")


def written_paths(lines: Iterable[str]) -> list[tuple[str, str]]:
    """(path, strace line) of every attempt to create or change a file or folder."""
    found: list[tuple[str, str]] = []
    for line in lines:
        match = _CALL.match(line)
        if match is None:
            continue
        name, args = match["name"], match["args"]
        at = name.endswith("at") or name in ("renameat2",)
        if name in _OPENS:
            if name != "creat" and not any(flag in args for flag in _WRITE_FLAGS):
                continue
            first = _path(args, at)
            if first:
                found.append((first[0], line))
        elif name in _MKDIRS:
            first = _path(args, at)
            if first:
                found.append((first[0], line))
        elif name in _MOVES:
            first = _path(args, at)
            if first:
                found.append((first[0], line))
                second = _path(first[1], at)
                if second:
                    found.append((second[0], line))
        elif name in _SYMLINKS:  # symlink(target, linkpath): only linkpath is written
            quoted = _QUOTED.match(args)
            if quoted is not None:
                rest = args[quoted.end() :].lstrip(", ")
                link = _path(rest, name == "symlinkat")
                if link:
                    found.append((link[0], line))
    return found


def _within(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(str(root) + os.sep)


def forbidden_writes(lines: Iterable[str], roots: Sequence[Path]) -> list[str]:
    """Writes outside ``roots``. Creating a root's parent folders (``~/.local/state``
    on the way to ``~/.local/state/hanasu``) is allowed; nothing else above them is."""
    bad = []
    for path, line in written_paths(lines):
        if any(_within(path, root) for root in roots):
            continue
        is_mkdir = _CALL.match(line) is not None and "mkdir" in line.split("(", 1)[0]
        if is_mkdir and any(_within(str(root), Path(path)) for root in roots):
            continue
        bad.append(line)
    return bad


def stray_files(home: Path, roots: Sequence[Path]) -> list[str]:
    """Files left under ``home`` outside the allowed roots (strace aside, a second look)."""
    stray = []
    for path in sorted(home.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        if not any(_within(os.path.normpath(path), root) for root in roots):
            stray.append(str(path))
    return stray


def violations(traced: Traced, home: Path, named: Iterable[Path] = ()) -> list[str]:
    """Every network attempt, forbidden write and stray file, one line each."""
    roots = allowed_roots(home, named)
    return [
        *(f"network: {line}" for line in network_attempts(traced.lines)),
        *(f"write: {line}" for line in forbidden_writes(traced.lines, roots)),
        *(f"left behind: {path}" for path in stray_files(home, roots)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tests.privacy.trace [--named PATH]... -- PROGRAM ARGS...``: run any build
    of the app (the frozen bundle in .ci/package.sh) under strace with a fresh HOME; print
    what it must not do; exit 1 if it did any of it."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m tests.privacy.trace")
    parser.add_argument("--named", type=Path, action="append", default=[])
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE",
        help="set for the program (e.g. QT_QPA_PLATFORM=offscreen HANASU_EXIT_WHEN_READY=1)",
    )
    parser.add_argument("program", nargs="+")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hanasu-privacy-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        extra = dict(item.split("=", 1) for item in args.env)
        traced = run_traced(
            [], strace_env(home, extra), Path(scratch) / "trace.txt", args.timeout, args.program
        )
        found = violations(traced, home, [p.resolve() for p in args.named])
    for line in (traced.stdout + traced.stderr).strip().splitlines()[-8:]:
        print(f"  | {line}")
    for line in found:
        print(line)
    print(f"privacy: exit status {traced.returncode}; {len(found)} violation(s)")
    return 1 if found or traced.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
