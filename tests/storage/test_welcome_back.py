"""The welcome back: a persona with ``welcome_back`` greets the user at their first input
after ``away_minutes`` away from the computer (the system's own idle time: a real X server
here), at most once per interval; no check-in is said while nobody is at the computer.
The idle time is read from a private Xvfb through the MIT-SCREEN-SAVER extension, and the
user's return is a real input event (XTest)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from app.adapters.user_idle import idle_reader
from app.core.events import TurnCommitted
from app.personas.check_in import CheckInSettings
from app.storage.check_ins import WELCOME, CheckIns
from bench.virtual_audio import stop_process


class Pipeline:
    """What the check-ins ask of the pipeline: background model work, noted here."""

    def __init__(self) -> None:
        self.asked: list[tuple[object, str]] = []

    def extract(self, key: object, instruction: str,
                done: Callable[[str | None], None]) -> None:
        self.asked.append((key, instruction))
        done(None)  # as if a voice started: nothing is said

    def announce(self, text: str) -> None:
        raise AssertionError("nothing is said here")


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _check_ins(settings: CheckInSettings, idle: list[float]) -> tuple[CheckIns, Pipeline, Clock]:
    pipeline, clock = Pipeline(), Clock()
    check_ins = CheckIns(pipeline, settings, clock, idle=lambda: idle[0])  # type: ignore[arg-type]
    return check_ins, pipeline, clock


def test_back_after_being_away_is_welcomed_once_per_interval() -> None:
    idle = [0.0]
    check_ins, pipeline, clock = _check_ins(
        CheckInSettings(welcome_back=True, away_minutes=10, every_minutes=60), idle)
    for minutes in (1, 5, 9.5):  # at the computer, or not away long enough yet
        idle[0] = minutes * 60
        assert not check_ins.tick()
    idle[0] = 3.0  # back after 9.5 minutes: not away long enough
    assert not check_ins.tick()
    idle[0] = 25 * 60
    assert not check_ins.tick()  # away: nothing said to an empty room
    idle[0] = 1.0
    assert check_ins.tick()  # the first input after 25 minutes away
    [(key, instruction)] = pipeline.asked
    assert key is None and instruction == WELCOME.format(minutes="25 minutes")
    clock.t += 20 * 60
    idle[0] = 15 * 60
    check_ins.tick()
    idle[0] = 0.5
    assert not check_ins.tick() and len(pipeline.asked) == 1  # once an hour at most


def test_no_check_in_is_said_while_nobody_is_at_the_computer() -> None:
    idle = [0.0]
    check_ins, pipeline, clock = _check_ins(CheckInSettings(after_minutes=5), idle)
    check_ins.observe(TurnCommitted(1, "hi", "Hello!", "conversation"))
    clock.t += 6 * 60
    idle[0] = 6 * 60  # no input since the conversation: away
    assert not check_ins.tick()
    idle[0] = 30.0  # typing, silently: still here
    assert check_ins.tick()
    assert pipeline.asked[0][0] == "conversation"
    assert pipeline.asked[0][1].startswith("(The user has been quiet for 5 minutes")


def test_welcome_back_is_off_unless_the_persona_asks() -> None:
    idle = [30 * 60]
    check_ins, pipeline, _ = _check_ins(CheckInSettings(), idle)
    check_ins.tick()
    idle[0] = 0.5
    assert not check_ins.tick() and pipeline.asked == []


@pytest.fixture
def private_display() -> Iterator[str]:
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "640x480x24",
                             "-nolisten", "tcp"], pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        number = pipe.readline().decode().strip()
    if not number:
        stop_process(proc)
        pytest.fail("Xvfb did not start (bash tests/setup.sh installs it)", pytrace=False)
    try:
        yield f":{number}"
    finally:
        stop_process(proc)


def _move_pointer(display_name: str) -> None:
    """A real input event, as a hand on the mouse makes it (XTest)."""
    x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    xtst = ctypes.CDLL(ctypes.util.find_library("Xtst") or "libXtst.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    display = x11.XOpenDisplay(display_name.encode())
    assert display, display_name
    xtst.XTestFakeRelativeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                                  ctypes.c_int, ctypes.c_ulong]
    x11.XFlush.argtypes = x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    xtst.XTestFakeRelativeMotionEvent(display, 7, 5, 0)
    x11.XFlush(display)
    x11.XCloseDisplay(display)


def test_the_system_idle_time_grows_and_input_resets_it(
        private_display: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", private_display)
    read = idle_reader()
    assert read is not None
    _move_pointer(private_display)
    time.sleep(1.5)
    before = read()
    assert before >= 1.0
    _move_pointer(private_display)
    time.sleep(0.1)
    assert read() < before - 0.9
