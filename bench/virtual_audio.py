"""A virtual sound card and display, to run the real app on a machine without either.

``bench ui``, the live tests and CI need a microphone they can speak into and a speaker
they can record, on machines with no sound card (containers, CI). ``Pulse`` starts a
private PulseAudio server with null sinks: ``spk`` is the speaker (record it from
``spk.monitor``), ``micfeed`` is where a test plays its speech (``paplay -d micfeed``),
and ``vmic`` (a remap of ``micfeed.monitor``) is the default microphone. ``Xvfb`` gives
an X server when there is no DISPLAY. It lives in ``app/`` (not ``tests/``) because the
``bench ui`` command uses it; ``tests/support`` imports it from here.

``python -m bench.virtual_audio`` (and ``tests/support/pulse.sh``, which runs it) starts
the server if it is not running and prints ``export VAR=value`` lines to eval in a shell.
Start it before importing sounddevice: PortAudio enumerates the devices at import.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DIR = "/tmp/hanasu-xdg"
"""Runtime folder when ``HANASU_PULSE_DIR`` is not set (short: a unix socket path must
fit in 108 bytes)."""
TOOLS = ("pulseaudio", "pactl")
SINKS = ("spk", "micfeed")
MIC = "vmic"


def stop_process(
    proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 20.0
) -> int:
    """Signal ``proc`` and wait; kill it if it does not end in time. Its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return int(proc.returncode)


def missing_tools() -> list[str]:
    """The PulseAudio programs this needs that are not on PATH."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def pulse_env(runtime_dir: Path) -> dict[str, str]:
    """The variables that point PulseAudio clients at the server in ``runtime_dir``."""
    return {
        "XDG_RUNTIME_DIR": str(runtime_dir),
        "PULSE_SERVER": f"unix:{runtime_dir}/pulse/native",
    }


def _pactl(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["pactl", *args], env=env, capture_output=True, text=True, timeout=15, check=False
    )


def _running(env: dict[str, str]) -> bool:
    return _pactl(env, "info").returncode == 0


def _names(env: dict[str, str], kind: str) -> set[str]:
    """Names (second column) of ``pactl list short sinks|sources``."""
    listed = _pactl(env, "list", "short", kind).stdout
    return {line.split("\t")[1] for line in listed.splitlines() if "\t" in line}


def start_pulse(runtime_dir: Path) -> dict[str, str]:
    """Start (or reuse) the server in ``runtime_dir`` with ``spk``, ``micfeed`` and ``vmic``
    as defaults; the environment for its clients. Idempotent: a running server only gets
    what it lacks. Raises RuntimeError with one line when it cannot."""
    missing = missing_tools()
    if missing:
        raise RuntimeError(f"{', '.join(missing)} not found (apt-get install pulseaudio)")
    runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    runtime_dir.chmod(0o700)
    env = {**os.environ, **pulse_env(runtime_dir)}
    if not _running(env):
        # -n: no default.pa (no hardware probing); root is allowed (containers), it only warns.
        subprocess.run(
            ["pulseaudio", "-D", "-n", "--exit-idle-time=-1",
             "--load=module-native-protocol-unix"],
            env=env, capture_output=True, timeout=30, check=False,
        )
        deadline = time.monotonic() + 5.0
        while not _running(env):
            if time.monotonic() > deadline:
                raise RuntimeError(f"PulseAudio did not come up in {runtime_dir}")
            time.sleep(0.1)
    sinks = _names(env, "sinks")
    for sink in SINKS:
        if sink not in sinks:
            _pactl(env, "load-module", "module-null-sink", f"sink_name={sink}")
    if MIC not in _names(env, "sources"):
        _pactl(env, "load-module", "module-remap-source", f"source_name={MIC}",
               "master=micfeed.monitor")
    _pactl(env, "set-default-sink", "spk")
    _pactl(env, "set-default-source", MIC)
    return pulse_env(runtime_dir)


class Pulse:
    """A private server in a fresh runtime folder, removed again by ``stop``."""

    def __init__(self) -> None:
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="hanasu-xdg-live-", dir="/tmp"))
        self.env: dict[str, str] = {}

    def start(self) -> dict[str, str]:
        self.env = start_pulse(self.runtime_dir)
        return self.env

    def child_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def stop(self) -> None:
        if self.env:
            _pactl(self.child_env(), "exit")
        shutil.rmtree(self.runtime_dir, ignore_errors=True)


class Xvfb:
    """The caller's DISPLAY when set (CI runs Xvfb :99), else a private Xvfb; with
    ``outlive_clients``, one that ends by itself once its last client has gone (for a
    process whose X connection lasts until it exits, as Qt's OpenGL one does)."""

    def __init__(self, outlive_clients: bool = False) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.display = os.environ.get("DISPLAY", "")
        self._terminate = ["-terminate"] if outlive_clients else []

    def start(self) -> str:
        if self.display:
            return self.display
        read_fd, write_fd = os.pipe()
        try:
            # -displayfd: Xvfb picks a free display number and writes it to the pipe.
            self.proc = subprocess.Popen(
                ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24",
                 "-nolisten", "tcp", *self._terminate],
                pass_fds=(write_fd,),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            number = pipe.readline().decode().strip()  # EOF (b"") if Xvfb died
        if not number:
            self.stop()
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"
        return self.display

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


def main() -> int:
    """Start the server in ``$HANASU_PULSE_DIR`` (or /tmp/hanasu-xdg); print its exports."""
    try:
        env = start_pulse(Path(os.environ.get("HANASU_PULSE_DIR") or DEFAULT_DIR))
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"virtual audio: {exc}", file=sys.stderr)
        return 1
    for name, value in env.items():
        print(f"export {name}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
