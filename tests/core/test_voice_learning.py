"""Learning the user's voice from their requests: the voice most recent requests are in
becomes a print once enough of them agree; an odd other voice is left out of it; two
voices heard as often never make one. Embeddings here are unit vectors scattered around a
voice's direction the way one speaker's requests scatter (cosine ~0.8-0.9 to its centre)."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.events import FloatAudio
from app.core.voice_gate import SAME_VOICE_SIMILARITY, VoiceGate
from app.core.voice_learning import LEARNT_NAME, REQUESTS_NEEDED, VoiceLearner

DIM = 256


def _unit(vector: FloatAudio) -> FloatAudio:
    out: FloatAudio = (vector / np.linalg.norm(vector)).astype(np.float32)
    return out


class Voice:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.centre = _unit(self.rng.standard_normal(DIM))

    def request(self) -> FloatAudio:
        """One request's print: the centre plus this request's own variation."""
        return _unit(self.centre + 0.03 * self.rng.standard_normal(DIM))


@pytest.fixture
def user() -> Voice:
    return Voice(1)


@pytest.fixture
def flatmate() -> Voice:
    return Voice(2)


def test_the_fixture_voices_scatter_like_real_ones(user: Voice, flatmate: Voice) -> None:
    same = [float(user.request() @ user.centre) for _ in range(50)]
    assert min(same) > 0.78 and max(same) < 0.95
    assert abs(float(user.request() @ flatmate.request())) < 0.3


def test_six_requests_in_one_voice_make_its_print(user: Voice, flatmate: Voice) -> None:
    learner = VoiceLearner()
    made = [learner.add(user.request(), 2.0, 100.0) for _ in range(REQUESTS_NEEDED)]
    assert made[:-1] == [None] * (REQUESTS_NEEDED - 1)
    voice = made[-1]
    assert voice is not None and voice.name == LEARNT_NAME
    assert voice.speech_s == pytest.approx(12.0) and voice.enrolled_at == 100.0
    assert np.linalg.norm(voice.embedding) == pytest.approx(1.0, abs=1e-5)
    gate = VoiceGate((voice,), ("Hana",))
    assert all(gate.known(user.request()) for _ in range(30))
    assert not any(gate.known(flatmate.request()) for _ in range(30))
    assert learner.heard == 0  # it starts again from nothing if asked to


def test_short_requests_are_no_sample_and_too_little_speech_waits(user: Voice) -> None:
    learner = VoiceLearner()
    for _ in range(10):
        assert learner.add(user.request(), 0.5, 0.0) is None  # "yes", "stop"
    assert learner.heard == 0
    for _ in range(REQUESTS_NEEDED):
        assert learner.add(user.request(), 1.2, 0.0) is None  # 7.2 s: under 9 s
    assert learner.add(user.request(), 1.9, 0.0) is not None


def test_a_flatmates_requests_are_left_out_of_the_users_print(user: Voice,
                                                              flatmate: Voice) -> None:
    learner = VoiceLearner()
    order = ["u", "f", "u", "u", "f", "u", "u", "u"]
    made = None
    for who in order:
        made = learner.add((user if who == "u" else flatmate).request(), 2.0, 0.0)
    assert made is not None and made.speech_s == pytest.approx(12.0)  # the six of the user
    print_vector = np.array(made.embedding)
    assert float(print_vector @ user.centre) > 0.97
    assert float(print_vector @ flatmate.centre) < SAME_VOICE_SIMILARITY / 2


def test_two_voices_heard_as_often_make_no_print(user: Voice, flatmate: Voice) -> None:
    learner = VoiceLearner()
    for _ in range(12):
        assert learner.add(user.request(), 2.0, 0.0) is None
        assert learner.add(flatmate.request(), 2.0, 0.0) is None


def test_a_broken_embedding_is_no_sample(user: Voice) -> None:
    learner = VoiceLearner()
    bad = user.request()
    bad[3] = np.nan
    assert learner.add(bad, 3.0, 0.0) is None and learner.heard == 0
