from __future__ import annotations

import math

import numpy as np
import pytest

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.pipeline import Engines
from app.personas import Persona, load_personas

RATE = 16_000


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


def voiced(seconds: float, freq: float = 180.0) -> np.ndarray:
    """A loud tone: 'speech' for the energy-based fake VAD."""
    t = np.arange(int(seconds * RATE), dtype=np.float32) / RATE
    return (0.3 * np.sin(2 * math.pi * freq * t)).astype(np.float32)


@pytest.fixture
def fake_engines() -> Engines:
    return Engines(
        FakeVoiceActivity(),
        FakeRecognizer(["What is your name?", "Stop, tell me a joke instead."]),
        FakeLanguageModel(),
        FakeSynthesizer(),
    )


@pytest.fixture(scope="session")
def persona() -> Persona:
    return load_personas().default
