"""The enrolled voices and the persona's names, kept by the controller: the recognizer judges
each turn's voice with them (``voice_gate``), and with voices enrolled the turn machine lets
speech over a paused reply wait for that judgement instead of interrupting on time."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.runtime.router import JobRouter
from app.core.stage_jobs import SetVoiceGate
from app.core.turn import TurnMachine
from app.core.voice_gate import VoiceGate, VoicePrint


class EnrolledVoices:
    def __init__(self, router: JobRouter, machine: TurnMachine, can_check: bool) -> None:
        """``can_check``: there is a voice print encoder (else every voice is heard)."""
        self.router, self.machine, self.can_check = router, machine, can_check
        self.gate = VoiceGate()

    def use(self, prints: Sequence[VoicePrint] | None = None,
            names: Sequence[str] | None = None) -> None:
        """New prints or names (None keeps them); sent on only when something changed."""
        gate = VoiceGate(self.gate.prints if prints is None else tuple(prints),
                         self.gate.names if names is None else tuple(names))
        if gate == self.gate:
            return
        self.gate = gate
        self.machine.voices_enrolled = gate.active and self.can_check
        self.router.send(SetVoiceGate(gate))
