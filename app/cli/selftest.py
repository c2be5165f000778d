"""``hanasu --self-test``: load every engine, run one tiny real turn, look at the audio devices.

Works the same from a source checkout, an installed wheel and the frozen bundle, so CI can run
it against ``dist/hanasu/hanasu`` and against the installed package. One line per check:

    OK   asr      0.41 s  "What is your name?"  <model path> (embedded)

FAIL lines make the exit status 1; WARN lines (no audio devices on a headless machine, a CPU-only
llama.cpp build) do not.
"""

from __future__ import annotations

import itertools
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from app.core.events import FloatAudio
from app.core.pipeline import Engines
from app.core.ports import PIPELINE_SAMPLE_RATE, ChatMessage
from app.errors import first_line

Status = Literal["OK", "WARN", "FAIL", "SKIP"]

TEST_UTTERANCE = "What is your name?"
EXPECTED_WORD = "name"
MAX_REPLY_PIECES = 40
"""The LLM check stops the reply after this many streamed pieces (about one token each)."""
SILENCE_PEAK = 0.01
"""A synthesized clip whose peak stays below this is treated as silence."""
ROLES = ("vad", "asr", "llm", "tts")
class CheckFailed(Exception):
    """Raised inside a check to turn it into a FAIL line with this message."""


@dataclass
class Check:
    name: str
    status: Status
    seconds: float | None
    detail: str


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    write: Callable[[str], None] = print

    def add(self, name: str, status: Status, detail: str, seconds: float | None = None) -> None:
        check = Check(name, status, seconds, detail)
        self.checks.append(check)
        self.write(format_check(check))

    @contextmanager
    def timed(self, name: str) -> Iterator[dict[str, str]]:
        """Run a block as one check: OK with ``out["detail"]``, FAIL on any exception."""
        out: dict[str, str] = {"detail": "", "status": "OK"}
        started = time.perf_counter()
        try:
            yield out
        except Exception as exc:
            self.add(name, "FAIL", _one_line(exc), time.perf_counter() - started)
        else:
            status: Status = "WARN" if out["status"] == "WARN" else "OK"
            self.add(name, status, out["detail"], time.perf_counter() - started)

    @property
    def failed(self) -> bool:
        return any(c.status == "FAIL" for c in self.checks)


def format_check(check: Check) -> str:
    seconds = f"{check.seconds:6.2f} s" if check.seconds is not None else " " * 8
    return f"{check.status:<4} {check.name:<8} {seconds}  {check.detail}"


def _one_line(exc: BaseException) -> str:
    """A failed check's own message, else the exception's type and first line."""
    text = first_line(exc)
    if isinstance(exc, CheckFailed) or text == type(exc).__name__:
        return text
    return f"{type(exc).__name__}: {text}"


def _peak(audio: FloatAudio) -> float:
    return float(np.max(np.abs(audio))) if audio.size else 0.0


# ---- individual checks ------------------------------------------------------------------------


def check_environment(report: Report) -> None:
    from app.paths import assets_dir, bundle_root

    frozen = bool(getattr(sys, "frozen", False))
    report.add(
        "app",
        "OK",
        f"hanasu {_app_version()}, Python {platform.python_version()} on {platform.system()}"
        f" {platform.machine()}, {'frozen bundle' if frozen else 'source'} at {bundle_root()}"
        f" (assets: {assets_dir()})",
    )


def _app_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hanasu")
    except PackageNotFoundError:
        return "(not installed)"


def check_assets(report: Report) -> str | None:
    """Personas load from the bundled assets; returns the default persona's system prompt."""
    prompt: str | None = None
    with report.timed("assets") as out:
        from app.models.catalog import load_catalog, manifest_candidates
        from app.personas import load_personas

        personas = load_personas()
        persona = personas.default
        prompt = persona.full_system_prompt()
        manifest = next((p for p in manifest_candidates() if p.is_file()), None)
        load_catalog()
        out["detail"] = f"default persona {persona.id!r}, model manifest {manifest}"
    return prompt


def resolve_models(report: Report) -> dict[str, str]:
    """Where each role's model comes from, as report text ("<path> (<source>)")."""
    from app.models.resolve import resolve

    where: dict[str, str] = {}
    for role in ROLES:
        try:
            model = resolve(role)  # type: ignore[arg-type]
        except Exception as exc:
            report.add(role, "FAIL", f"no model: {_one_line(exc)}")
            continue
        size = model.size_bytes / 1e6
        where[role] = f"{model.path} ({model.source}, {size:.0f} MB)"
    return where


def load_engines(report: Report, where: dict[str, str]) -> Engines | None:
    """build_engines() exactly as the app calls it, each engine timed from when it starts
    loading (build_engines' on_loading hook) to when the next one starts."""
    from app.engines import EngineChoice, build_engines

    marks: list[tuple[str, float]] = []

    def loading(role: str) -> None:
        marks.append((role, time.perf_counter()))

    try:
        engines = build_engines(EngineChoice(), on_loading=loading)
    except Exception as exc:
        failed = marks[-1][0] if marks else "engines"
        for (role, at), (_, until) in itertools.pairwise(marks):
            report.add(role, "OK", f"loaded  {where.get(role, '')}", until - at)
        report.add(failed, "FAIL", f"load failed: {_one_line(exc)}  {where.get(failed, '')}")
        return None
    done = time.perf_counter()
    ends = [at for _, at in marks[1:]] + [done]
    for (role, at), until in zip(marks, ends, strict=False):
        report.add(role, "OK", f"loaded  {where.get(role, '')}", until - at)
    for notice in engines.notices:  # a voice fallback: the app works, but not as asked
        report.add("notice", "WARN", notice)
    _gpu_note(report, engines)
    return engines


def _gpu_note(report: Report, engines: Engines) -> None:
    layers = getattr(engines.llm, "n_gpu_layers", None)
    try:
        import llama_cpp

        gpu = bool(llama_cpp.llama_supports_gpu_offload())
    except Exception as exc:
        report.add("gpu", "WARN", f"llama.cpp GPU support unknown: {_one_line(exc)}")
        return
    if gpu:
        report.add("gpu", "OK", f"llama.cpp GPU build; LLM n_gpu_layers={layers} (-1 = all)")
    else:
        report.add("gpu", "OK", "llama.cpp CPU build; LLM runs on the CPU")


def run_turn(report: Report, engines: Engines, system_prompt: str | None) -> None:
    """TTS -> 16 kHz -> VAD + ASR -> LLM -> TTS, each step its own check."""
    utterance: FloatAudio | None = None
    with report.timed("tts-in") as out:
        spoken = engines.tts.synthesize(TEST_UTTERANCE)
        if _peak(spoken) < SILENCE_PEAK:
            raise CheckFailed(f"test utterance came out silent ({spoken.size} samples)")
        from app.adapters.resample import resample

        utterance = resample(spoken, engines.tts.sample_rate, PIPELINE_SAMPLE_RATE)
        out["detail"] = (
            f"synthesized {TEST_UTTERANCE!r}: {utterance.size / PIPELINE_SAMPLE_RATE:.2f} s"
            f" at {engines.tts.sample_rate} Hz -> 16 kHz"
        )
    if utterance is None:
        for name in ("speech", "heard", "reply", "tts-out"):
            report.add(name, "SKIP", "needs the test utterance")
        return

    with report.timed("speech") as out:
        probability = _max_speech_probability(engines, utterance)
        if probability < 0.5:
            raise CheckFailed(f"VAD heard no speech in the test utterance (p={probability:.2f})")
        out["detail"] = f"VAD max speech probability {probability:.2f}"

    transcript = ""
    with report.timed("heard") as out:
        transcript = engines.asr.transcribe(utterance)
        if EXPECTED_WORD not in transcript.lower():
            raise CheckFailed(f"ASR heard {transcript!r}, expected the word {EXPECTED_WORD!r}")
        out["detail"] = f"ASR: {transcript!r}"

    reply = ""
    with report.timed("reply") as out:
        reply, pieces = _short_reply(engines, system_prompt, transcript or TEST_UTTERANCE)
        if not reply.strip():
            raise CheckFailed(f"LLM gave an empty reply ({pieces} pieces)")
        out["detail"] = f"LLM ({pieces} pieces): {_clip(reply)!r}"

    with report.timed("tts-out") as out:
        if not reply.strip():
            raise CheckFailed("nothing to speak (the LLM reply was empty)")
        audio = engines.tts.synthesize(reply)
        peak = _peak(audio)
        if peak < SILENCE_PEAK:
            raise CheckFailed(f"spoken reply is silent (peak {peak:.4f}, {audio.size} samples)")
        out["detail"] = (
            f"spoke the reply: {audio.size / engines.tts.sample_rate:.2f} s, peak {peak:.2f}"
        )


def _max_speech_probability(engines: Engines, audio: FloatAudio) -> float:
    vad = engines.vad
    size = vad.frame_size
    vad.reset()
    best = 0.0
    for start in range(0, audio.size - size + 1, size):
        best = max(best, vad.probability(audio[start : start + size]))
    vad.reset()
    return best


def _short_reply(engines: Engines, system_prompt: str | None, text: str) -> tuple[str, int]:
    messages = [ChatMessage("user", text)]
    if system_prompt:
        messages.insert(0, ChatMessage("system", system_prompt))
    pieces: list[str] = []
    for piece in engines.llm.stream(messages, cancelled=lambda: len(pieces) >= MAX_REPLY_PIECES):
        pieces.append(piece)
    return "".join(pieces).strip(), len(pieces)


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_audio_devices(report: Report) -> None:
    """Microphones and speakers the app could use; none is a warning, not a failure
    (CI machines and servers have no sound card)."""
    started = time.perf_counter()
    try:
        inputs, outputs = _list_devices()
    except Exception as exc:
        report.add(
            "audio", "WARN", f"no audio devices: {_one_line(exc)}", time.perf_counter() - started
        )
        return
    elapsed = time.perf_counter() - started
    if not inputs and not outputs:
        report.add("audio", "WARN", "no audio devices found", elapsed)
        return
    status: Status = "OK" if inputs and outputs else "WARN"
    detail = f"microphones: {_names(inputs)}; speakers: {_names(outputs)}"
    report.add("audio", status, detail, elapsed)


def _list_devices() -> tuple[list[str], list[str]]:
    """Input and output device names (default marked with *), from app.adapters.audio_devices."""
    try:
        from app.adapters.audio_devices import list_devices
    except ImportError:  # the adapter is optional for the self-test: ask PortAudio directly
        import sounddevice

        devices: list[dict[str, Any]] = list(sounddevice.query_devices())
        return (
            [str(d["name"]) for d in devices if d["max_input_channels"] > 0],
            [str(d["name"]) for d in devices if d["max_output_channels"] > 0],
        )
    found = list_devices()
    return (
        [d.name + ("*" if d.is_default else "") for d in found.inputs],
        [d.name + ("*" if d.is_default else "") for d in found.outputs],
    )


def _names(names: list[str], shown: int = 4) -> str:
    if not names:
        return "none"
    more = f" (+{len(names) - shown} more)" if len(names) > shown else ""
    return ", ".join(_clip(n, 40) for n in names[:shown]) + more


def check_qt(report: Report) -> None:
    """PySide6 imports and a windowing platform plugin is present (bundled or installed)."""
    with report.timed("qt") as out:
        from PySide6 import QtCore, QtGui, QtWidgets  # noqa: F401

        plugins = Path(QtCore.QLibraryInfo.path(QtCore.QLibraryInfo.LibraryPath.PluginsPath))
        platforms = sorted(
            p.name.split(".")[0].removeprefix("libq").removeprefix("q")
            for p in (plugins / "platforms").glob("*")
            if p.is_file()
        )
        wanted = {"linux": "xcb", "win32": "windows", "darwin": "cocoa"}.get(sys.platform)
        if wanted and wanted not in platforms:
            out["status"] = "WARN"
        out["detail"] = f"PySide6 {QtCore.qVersion()}, platform plugins: {', '.join(platforms)}"


# ---- entry point --------------------------------------------------------------------------------


def check_listening_aids(report: Report) -> None:
    """Echo cancellation (so it doesn't hear itself on speakers) and the end-of-turn model."""
    with report.timed("echo") as out:
        from app.engines import build_echo_canceller

        echo = build_echo_canceller()
        tone = (0.3 * np.sin(np.arange(32 * 512) / 16_000 * 2 * np.pi * 300)).astype(np.float32)
        for start in range(0, tone.size, 512):
            echo.add_reference(tone[start : start + 512])
            cleaned = echo.process(tone[start : start + 512])
        if cleaned.size != 512:
            raise CheckFailed(f"echo canceller returned {cleaned.size} samples for 512")
        out["detail"] = f"WebRTC AEC3 ready ({type(echo).__name__})"
    with report.timed("turn-end") as out:
        from app.adapters.smart_turn import SmartTurnDetector

        detector = SmartTurnDetector()
        probability = detector.complete_probability(np.zeros(16_000, dtype=np.float32))
        if not 0.0 <= probability <= 1.0:
            raise CheckFailed(f"end-of-turn model gave {probability}")
        out["detail"] = "Smart Turn v3.2 loaded"


def run_self_test(write: Callable[[str], None] = print) -> Report:
    report = Report(write=write)
    write("Hanasu self-test")
    check_environment(report)
    prompt = check_assets(report)
    check_qt(report)
    where = resolve_models(report)
    if len(where) == len(ROLES):
        engines = load_engines(report, where)
        if engines is not None:
            run_turn(report, engines, prompt)
    else:
        report.add("turn", "SKIP", "a model is missing, no test turn")
    check_listening_aids(report)
    check_audio_devices(report)
    return report


def main() -> int:
    started = time.perf_counter()
    report = run_self_test()
    failed = [c.name for c in report.checks if c.status == "FAIL"]
    warned = [c.name for c in report.checks if c.status == "WARN"]
    summary = "FAILED: " + ", ".join(failed) if failed else "all checks passed"
    if warned:
        summary += f" (warnings: {', '.join(warned)})"
    print(f"self-test {summary} in {time.perf_counter() - started:.1f} s")
    sys.stdout.flush()
    return 1 if failed else 0
