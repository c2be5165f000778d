"""``hanasu bench tools``: what a tool round trip costs, and whether a real model calls one.

1. **Round trip on a scripted engine** (always): the responder the app runs, with the real
   built-in tools on an in-memory database, answers "set a timer" through a model that
   writes Gemma 4's call format at a steady token pace. Measured per reply, on the one
   monotonic clock: from the model's closing call marker to the tool's result, to the
   model's next round, and to the first sentence after the call handed to the voice; and,
   beside it, the same answer without a call. The difference is what the app adds; a real
   model adds its own prefill of the response (about 30 tokens) on top.
2. **A real model** (``--gguf PATH``, or ``--production``: the downloaded production model,
   skipped with a line when none is there): the persona's prompt, the built-in tools
   offered in the model's own format, and "Set a timer for two minutes, please." The check
   passes when the model calls ``set_timer`` with 120 seconds and then speaks; the time to
   the call and to the spoken answer are reported. This is the GPU script's tool step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from app.core.events import PipelineEvent, ReplyChunk
from app.core.ports import ChatMessage, PromptStats
from app.core.stage_jobs import SetReplyOptions, UseTools
from app.core.stages import Responder
from app.core.synthesizer import SynthesizerJob
from app.core.tool_rounds import ToolWait, reply_with_tools
from app.core.turn_commands import Respond
from app.core.worker import LiveTurn
from app.storage.history import Database
from app.storage.notes import NoteStore
from app.storage.reminders import ReminderStore
from app.storage.tool_desk import ToolDesk
from app.tools.builtin import builtin_registry
from app.tools.gemma4 import CALL_CLOSE, CALL_OPEN
from app.tools.spec import ToolCall, ToolResult, ToolSpec

ASKED = "Set a timer for two minutes, please."
TOKEN_S = 0.02
"""The scripted model's pace: 50 tokens/s, a GPU's for Gemma 4 26B A4B."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=20, help="replies per case (scripted)")
    parser.add_argument("--gguf", type=Path, help="also ask this GGUF model to set a timer")
    parser.add_argument("--production", action="store_true",
                        help="also ask the downloaded production model (skipped if absent)")
    parser.add_argument("--n-gpu-layers", type=int, default=-1)
    parser.add_argument("--json", type=Path, help="write the report here too")


class PacedGemma:
    """Writes Gemma 4's call (or, ``with_call`` False, no call) one token per ``TOKEN_S``,
    noting when the call closed and when it was asked to go on."""

    def __init__(self, with_call: bool) -> None:
        self.with_call = with_call
        self.call_closed: float | None = None
        self.resumed: float | None = None

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        return True

    def _paced(self, pieces: Sequence[str]) -> Iterator[str]:
        for piece in pieces:
            time.sleep(TOKEN_S)
            yield piece
            if piece == CALL_CLOSE:
                self.call_closed = time.monotonic()

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        if self.with_call:
            return self._paced(["Sure", "!", CALL_OPEN, "call", ":", "set", "_timer", "{",
                                "seconds", ":", "120", "}", CALL_CLOSE])
        return self._paced(["Sure", "!", " Your", " two", " minute", " timer", " is",
                            " running", "."])

    def stream_after(self, messages: Sequence[ChatMessage], written: str,
                     cancelled: Callable[[], bool],
                     on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        self.resumed = time.monotonic()
        return self._paced(["Your", " two", " minute", " timer", " is", " running", "."])

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return PromptStats(0, 0)


class _Clock:
    def now(self) -> float:
        return time.monotonic()


def one_reply(with_call: bool) -> dict[str, float | None]:
    """One reply through the app's responder: seconds from the request to the answer's
    sentence reaching the voice, and (with a call) the round trip's parts."""
    desk_db = Database(None)
    reminders = ReminderStore(desk_db)
    desk = ToolDesk(builtin_registry(reminders, NoteStore(desk_db)), reminders)
    model = PacedGemma(with_call)
    live = LiveTurn()
    live.turn_id = 1
    live.first_audio_priority = False
    answered: list[float] = []
    tool_done: list[float] = []

    def run(call: ToolCall, cancel: threading.Event) -> ToolResult:
        result = desk.run_call(call, cancel)
        tool_done.append(time.monotonic())
        return result

    def to_voice(job: SynthesizerJob) -> None:
        if isinstance(job, ReplyChunk) and "timer" in job.text:
            answered.append(time.monotonic())

    events: list[PipelineEvent] = []
    responder = Responder(events.append, model, live, _Clock(), to_voice)
    responder.handle(UseTools(desk.registry.specs, run))
    responder.handle(SetReplyOptions(None, None, ToolWait(1.2, ())))
    started = time.monotonic()
    responder.handle(Respond(1, [ChatMessage("user", ASKED)], "en"))
    if with_call and not reminders.pending():
        raise SystemExit("bench tools: the scripted call set no timer")
    report: dict[str, float | None] = {
        "answer_s": answered[0] - started if answered else None}
    if with_call and model.call_closed is not None:
        report["to_result_s"] = tool_done[0] - model.call_closed if tool_done else None
        report["to_next_round_s"] = (model.resumed - model.call_closed
                                     if model.resumed else None)
        report["to_answer_sentence_s"] = (answered[0] - model.call_closed
                                          if answered else None)
    desk_db.close()
    return report


def _stats(values: Sequence[float | None]) -> dict[str, float]:
    got = sorted(v for v in values if v is not None)
    if not got:
        return {}
    p90 = got[min(len(got) - 1, round(0.9 * (len(got) - 1)))]
    return {"p50": statistics.median(got), "p90": p90, "n": float(len(got))}


def scripted(runs: int) -> dict[str, Any]:
    plain = [one_reply(False) for _ in range(runs)]
    called = [one_reply(True) for _ in range(runs)]
    return {
        "token_s": TOKEN_S,
        "plain_answer_s": _stats([r["answer_s"] for r in plain]),
        "tool_answer_s": _stats([r["answer_s"] for r in called]),
        "call_to_result_s": _stats([r.get("to_result_s") for r in called]),
        "call_to_next_round_s": _stats([r.get("to_next_round_s") for r in called]),
        "call_to_answer_sentence_s": _stats([r.get("to_answer_sentence_s") for r in called]),
    }


def real_model(path: Path, n_gpu_layers: int) -> dict[str, Any]:
    """Ask a real GGUF model to set a timer, through the app's own tool loop."""
    from app.adapters.llama_llm import LlamaLanguageModel
    from app.personas import load_persona_library

    persona = load_persona_library().default
    llm = LlamaLanguageModel(path, n_gpu_layers=n_gpu_layers)
    desk_db = Database(None)
    reminders = ReminderStore(desk_db)
    desk = ToolDesk(builtin_registry(reminders, NoteStore(desk_db)), reminders)
    offered = llm.offer_tools(desk.registry.specs)
    calls: list[tuple[float, ToolCall]] = []

    def run(call: ToolCall, cancel: threading.Event) -> ToolResult:
        calls.append((time.monotonic(), call))
        return desk.run_call(call, cancel)

    messages = [ChatMessage("system", persona.full_system_prompt()),
                ChatMessage("user", ASKED)]
    llm.warm(messages[:1])
    started = time.monotonic()
    spoken: list[tuple[float, str]] = []
    for piece in reply_with_tools(llm, messages, lambda: False, None, run, "en"):
        if piece:
            spoken.append((time.monotonic(), piece))
    timers = [r.duration_s for r in reminders.pending()]
    desk_db.close()
    called = [c for _, c in calls]
    ok = offered and any(c.name == "set_timer" and c.arguments.get("seconds") == 120
                         for c in called) and 120.0 in timers
    return {
        "model": str(path), "tools_offered": offered, "ok": bool(ok),
        "calls": [{"name": c.name, "arguments": dict(c.arguments)} for c in called],
        "to_call_s": calls[0][0] - started if calls else None,
        "to_first_words_s": spoken[0][0] - started if spoken else None,
        "said": "".join(text for _, text in spoken)[:300],
    }


def _production_path() -> Path | None:
    from app.models.errors import ModelError
    from app.models.resolve import resolve

    try:
        return resolve("llm", prefer="production").path
    except ModelError:
        return None


def _line(name: str, stats: dict[str, float]) -> str:
    if not stats:
        return f"  {name}: none"
    return f"  {name}: p50 {stats['p50'] * 1000:.0f} ms, p90 {stats['p90'] * 1000:.0f} ms"


def main(args: argparse.Namespace) -> int:
    report: dict[str, Any] = {"scripted": scripted(args.runs)}
    s = report["scripted"]
    print(f"scripted Gemma 4 at {TOKEN_S * 1000:.0f} ms/token, {args.runs} replies per case:")
    for key in ("plain_answer_s", "tool_answer_s", "call_to_result_s",
                "call_to_next_round_s", "call_to_answer_sentence_s"):
        print(_line(key.removesuffix("_s").replace("_", " "), s[key]))
    path = args.gguf or (_production_path() if args.production else None)
    if args.production and path is None:
        print("real model: skipped (no production model downloaded on this machine)")
    status = 0
    if path is not None:
        found = real_model(path, args.n_gpu_layers)
        report["real_model"] = found
        print(f"real model {path.name}: {'OK' if found['ok'] else 'FAILED'}: "
              f"calls {found['calls']}, call at {found['to_call_s']} s, "
              f"first words at {found['to_first_words_s']} s: {found['said']!r}")
        status = 0 if found["ok"] else 1
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return status
