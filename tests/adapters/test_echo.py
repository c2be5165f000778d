"""Echo cancellation: the NullEchoCanceller, and WebRTC AEC3 in a synthetic room.

The room: the assistant's voice (the embedded Piper voice, resampled to 16 kHz) is played
and reaches the microphone as 0.5 x the played audio, delayed by D ms, convolved with a
60 ms exponentially decaying impulse response (fixed seed), plus low noise. The user is
espeak-ng. Audio is fed in 32 ms blocks, ``add_reference(played)`` then
``process(captured)``, as the pipeline does. Processed audio lags the input by about
18 ms (framing plus AEC3's own delay); the tests keep that lag, as the pipeline would.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

import app.adapters.echo as echo_module
from app.adapters.echo import AEC3_DELAY, NullEchoCanceller, WebRtcEchoCanceller
from app.adapters.errors import EngineLoadError
from app.core.events import FloatAudio
from app.core.ports import VoiceActivity
from tests.adapters.conftest import espeak_speech

RATE = 16_000
BLOCK = 512  # 32 ms, the pipeline's block (and Silero's frame)
ADAPT = RATE  # the first second is the canceller's to adapt in
USER_ONSET = 2 * RATE  # in the double-talk test the user starts talking at 2.0 s
DELAYS_MS = [40, 120, 250]
ASSISTANT_TEXT = (
    "Sure, I can help you plan the trip to Kyoto next spring. "
    "The cherry blossoms usually peak in early April, so book the hotel soon."
)
USER_TEXT = "wait, stop, I have a question about the hotel"


# ---- the synthetic room ----------------------------------------------------------------


def room_echo(played: FloatAudio, delay_ms: int, seed: int = 0) -> FloatAudio:
    """What the microphone hears of ``played``: delayed, reverberated, attenuated, noisy."""
    rng = np.random.default_rng(seed)
    n = int(0.060 * RATE)
    ir = rng.standard_normal(n) * np.exp(-np.arange(n) / (0.012 * RATE))  # ~40 dB over 60 ms
    ir[0] = 1.0  # the direct path
    ir /= np.sqrt(np.sum(ir**2))
    echo = 0.5 * np.convolve(played.astype(np.float64), ir)[: played.size]
    shift = delay_ms * RATE // 1000
    echo = np.concatenate([np.zeros(shift), echo])[: played.size]
    noise = 1e-4 * rng.standard_normal(played.size)
    return (echo + noise).astype(np.float32)


def run_canceller(
    canceller: WebRtcEchoCanceller | NullEchoCanceller,
    played: FloatAudio,
    captured: FloatAudio,
    block: int = BLOCK,
) -> FloatAudio:
    """Feed both streams block by block; the output as the pipeline sees it (not re-aligned)."""
    out = []
    for start in range(0, captured.size, block):
        canceller.add_reference(played[start : start + block])
        piece = canceller.process(captured[start : start + block])
        assert piece.size == captured[start : start + block].size
        assert piece.dtype == np.float32
        out.append(piece)
    return np.concatenate(out)


def energy_db(x: FloatAudio) -> float:
    return float(10 * np.log10(np.sum(x.astype(np.float64) ** 2) + 1e-20))


def onset_of(speech: FloatAudio) -> int:
    """First sample louder than 2% of the peak."""
    return int(np.argmax(np.abs(speech) > 0.02 * np.abs(speech).max()))


# ---- fixtures --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def assistant() -> FloatAudio:
    from app.adapters.piper_tts import PiperSynthesizer
    from app.adapters.resample import resample

    tts = PiperSynthesizer()
    audio = resample(tts.synthesize(ASSISTANT_TEXT), tts.sample_rate, RATE)
    assert audio.size > 5 * RATE  # long enough to talk over
    return audio


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> FloatAudio:
    speech = espeak_speech(USER_TEXT, tmp_path_factory.mktemp("echo") / "user.wav")
    speech = speech[onset_of(speech) :]  # starts with the voice itself
    scaled: FloatAudio = (0.3 * speech / np.abs(speech).max()).astype(np.float32)
    return scaled


@pytest.fixture(scope="module")
def vad() -> VoiceActivity:
    from app.adapters.silero_vad import SileroVad

    return SileroVad()


def vad_probabilities(vad: VoiceActivity, audio: FloatAudio) -> FloatAudio:
    vad.reset()
    n = vad.frame_size
    probs = [vad.probability(audio[i : i + n]) for i in range(0, audio.size - n + 1, n)]
    return np.array(probs, dtype=np.float32)


# ---- NullEchoCanceller -----------------------------------------------------------------


def test_null_canceller_passes_audio_through() -> None:
    rng = np.random.default_rng(3)
    null = NullEchoCanceller()
    for size in (0, 1, 100, 333, 512):
        audio = rng.standard_normal(size).astype(np.float32) * 0.1
        null.add_reference(rng.standard_normal(size).astype(np.float32))
        out = null.process(audio)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, audio)
    null.reset()


# ---- WebRtcEchoCanceller: framing and lengths ------------------------------------------


def test_odd_block_sizes_and_reference_without_capture_keep_lengths() -> None:
    aec = WebRtcEchoCanceller()
    rng = np.random.default_rng(1)
    # Reference with no capture at all (the microphone not read yet), odd lengths.
    for size in (100, 333, 1, 0, 159):
        aec.add_reference(rng.standard_normal(size).astype(np.float32) * 0.1)
    total_in = total_out = 0
    for size in (100, 333, 0, 1, 159, 160, 161, 512, 333, 100, 1000):
        aec.add_reference(rng.standard_normal(size).astype(np.float32) * 0.1)
        out = aec.process(rng.standard_normal(size).astype(np.float32) * 0.1)
        assert out.shape == (size,)
        assert out.dtype == np.float32
        total_in += size
        total_out += out.size
    assert total_out == total_in
    # Capture with no reference at all (nothing played) keeps lengths too.
    for size in (333, 100, 7):
        assert aec.process(np.zeros(size, dtype=np.float32)).shape == (size,)


def test_output_is_the_input_a_constant_lag_later_when_nothing_plays() -> None:
    """No echo to remove: the input comes out, a little later and (nearly) unchanged.

    The lag is the framing's ``latency_samples`` (159) plus AEC3's own processing delay
    (128 samples measured with livekit 1.2.1), under 20 ms in all.
    """
    aec = WebRtcEchoCanceller()
    rng = np.random.default_rng(2)
    signal = (0.1 * rng.standard_normal(3 * RATE)).astype(np.float32)
    out = []
    start = 0
    while start < signal.size:
        size = int(rng.integers(1, 700))
        out.append(aec.process(signal[start : start + size]))
        start += size
    y = np.concatenate(out)
    assert y.size == signal.size
    assert aec.latency_samples < RATE // 100  # the framing adds under 10 ms
    np.testing.assert_array_equal(y[: aec.latency_samples], 0.0)
    ref = signal[RATE : 2 * RATE]
    scores = [abs(float(np.dot(ref, y[RATE + k : 2 * RATE + k]))) for k in range(RATE // 50)]
    lag = int(np.argmax(scores))
    assert aec.latency_samples <= lag < aec.latency_samples + RATE // 100
    shifted = y[RATE + lag : 2 * RATE + lag]
    assert np.corrcoef(ref, shifted)[0, 1] > 0.9
    assert abs(energy_db(shifted) - energy_db(ref)) < 1.5


def test_reset_starts_over() -> None:
    aec = WebRtcEchoCanceller()
    tone = (0.2 * np.sin(np.arange(1000) * 0.1)).astype(np.float32)
    aec.add_reference(tone)
    aec.process(tone[:333])
    aec.reset()
    out = aec.process(tone[:200])
    assert out.shape == (200,)
    np.testing.assert_array_equal(out[: aec.latency_samples], 0.0)


def test_missing_livekit_is_an_engine_load_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "livekit", None)  # makes `from livekit import rtc` fail
    with pytest.raises(EngineLoadError, match="livekit"):
        WebRtcEchoCanceller()


def test_rejects_multichannel_audio() -> None:
    aec = WebRtcEchoCanceller()
    with pytest.raises(ValueError, match="1-D"):
        aec.process(np.zeros((160, 2), dtype=np.float32))


# ---- WebRtcEchoCanceller in the synthetic room -----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("delay_ms", DELAYS_MS)
def test_echo_is_removed_by_20db_after_one_second(assistant: FloatAudio, delay_ms: int) -> None:
    echo = room_echo(assistant, delay_ms)
    residual = run_canceller(WebRtcEchoCanceller(), assistant, echo)
    erle = energy_db(echo[ADAPT:]) - energy_db(residual[ADAPT:])
    print(f"ERLE at {delay_ms} ms: {erle:.1f} dB")
    assert erle >= 20.0


@pytest.mark.slow
@pytest.mark.parametrize("delay_ms", DELAYS_MS)
def test_vad_hears_the_raw_echo_but_not_the_residual(
    assistant: FloatAudio, vad: VoiceActivity, delay_ms: int
) -> None:
    echo = room_echo(assistant, delay_ms)
    residual = run_canceller(WebRtcEchoCanceller(), assistant, echo)
    skip = ADAPT // BLOCK
    raw = vad_probabilities(vad, echo)[skip:]
    cleaned = vad_probabilities(vad, residual)[skip:]
    assert raw.max() >= 0.5  # without cancellation the assistant would interrupt itself
    assert cleaned.max() < 0.5, f"VAD fired on the residual: max {cleaned.max():.2f}"


@pytest.mark.slow
@pytest.mark.parametrize("delay_ms", DELAYS_MS)
def test_user_talking_over_the_assistant_is_detected_within_600ms(
    assistant: FloatAudio, user: FloatAudio, vad: VoiceActivity, delay_ms: int
) -> None:
    echo = room_echo(assistant, delay_ms)
    voice = np.zeros_like(echo)
    part = user[: echo.size - USER_ONSET]
    voice[USER_ONSET : USER_ONSET + part.size] = part
    assert energy_db(echo[USER_ONSET:]) > energy_db(voice)  # the echo is the louder one
    # AEC3 in the livekit wheel is not deterministic from run to run on the same input: at
    # 40 ms, 1 run in 8 took 0.9-1.0 s to let the voice through (the others 0.05-0.2 s).
    # So three fresh cancellers: most must hear the user within 0.6 s, none later than 1.2 s.
    delays = []
    for _ in range(3):
        processed = run_canceller(WebRtcEchoCanceller(), assistant, echo + voice)
        probs = vad_probabilities(vad, processed)
        first = ADAPT // BLOCK
        fired = np.nonzero(probs[first:] >= 0.5)[0] + first
        assert fired.size, "the user's speech was never detected"
        heard_at = (int(fired[0]) + 1) * BLOCK  # the end of the first frame that fired
        assert heard_at > USER_ONSET, f"VAD fired {(USER_ONSET - heard_at) / RATE:.2f} s early"
        delays.append((heard_at - USER_ONSET) / RATE)
    print(f"double talk at {delay_ms} ms: detected {delays} s after onset")
    assert sorted(delays)[1] <= 0.6 and max(delays) <= 1.2, delays


@pytest.mark.slow
def test_echo_is_removed_when_silence_before_it_was_not_reported(assistant: FloatAudio) -> None:
    """1.5 s with nothing reported as played (speaker idle), then the assistant speaks."""
    idle = 24_000
    played = np.concatenate([np.zeros(idle, dtype=np.float32), assistant])
    echo = room_echo(played, 120)
    aec = WebRtcEchoCanceller()
    out = []
    for start in range(0, echo.size, BLOCK):
        if start >= idle:
            aec.add_reference(played[start : start + BLOCK])
        out.append(aec.process(echo[start : start + BLOCK]))
    residual = np.concatenate(out)
    after = idle + ADAPT
    erle = energy_db(echo[after:]) - energy_db(residual[after:])
    print(f"ERLE after unreported silence: {erle:.1f} dB")
    assert erle >= 20.0


@pytest.mark.slow
def test_cpu_time_per_10ms_frame(assistant: FloatAudio) -> None:
    echo = room_echo(assistant, 120)
    aec = WebRtcEchoCanceller()
    start = time.process_time()
    run_canceller(aec, assistant, echo)
    per_frame = (time.process_time() - start) / (echo.size / 160)
    print(f"CPU per 10 ms frame: {per_frame * 1e6:.0f} us")
    assert per_frame < 0.002  # a fifth of real time at most; measured well under 0.2 ms


def test_nothing_played_for_a_second_bypasses_aec3_without_a_seam(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Idle: AEC3 stops running, and the capture continues at the same lag, unprocessed."""
    aec = WebRtcEchoCanceller()
    calls = 0
    process_stream = aec._apm.process_stream

    def counting(frame: object) -> None:
        nonlocal calls
        calls += 1
        process_stream(frame)

    monkeypatch.setattr(aec._apm, "process_stream", counting)
    rng = np.random.default_rng(3)
    signal = (0.1 * rng.standard_normal(3 * RATE)).astype(np.float32)
    y = run_canceller(aec, np.zeros(0, dtype=np.float32), signal, block=333)
    assert aec.bypassed
    assert calls <= 2 * RATE // 100 // 2  # AEC3 ran for about the first second only
    lag = aec.latency_samples + AEC3_DELAY
    np.testing.assert_array_equal(y[2 * RATE :], signal[2 * RATE - lag : 3 * RATE - lag])
    aec.add_reference(np.zeros(160, dtype=np.float32))
    assert not aec.bypassed


@pytest.mark.slow
def test_echo_is_removed_after_a_bypassed_silence(
    assistant: FloatAudio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The assistant speaks, is silent (unreported) for 2 s, speaks again: AEC3, bypassed
    meanwhile, cancels the second part (a canceller that never stopped is printed for
    comparison: AEC3's ERLE varies by several dB from run to run, either way)."""
    first, second = assistant[: 3 * RATE], assistant[3 * RATE :]
    gap = 2 * RATE
    played = np.concatenate([first, np.zeros(gap, dtype=np.float32), second])
    echo = room_echo(played, 120)

    def residual() -> FloatAudio:
        aec = WebRtcEchoCanceller()
        out = []
        for start in range(0, echo.size, BLOCK):
            if not first.size <= start < first.size + gap:
                aec.add_reference(played[start : start + BLOCK])
            out.append(aec.process(echo[start : start + BLOCK]))
            if start == first.size + gap - BLOCK:
                assert aec.bypassed == (echo_module.IDLE_BYPASS_FRAMES < 10**6)
        return np.concatenate(out)

    resumed = first.size + gap
    erle = energy_db(echo[resumed:]) - energy_db(residual()[resumed:])
    monkeypatch.setattr(echo_module, "IDLE_BYPASS_FRAMES", 10**9)
    erle_always = energy_db(echo[resumed:]) - energy_db(residual()[resumed:])
    print(f"ERLE after a bypassed silence: {erle:.1f} dB (never bypassed: {erle_always:.1f} dB)")
    assert erle >= 20.0
