"""A chunk's mouth timeline from its audio: closed in silence, open on sound at the hop it
starts, the phonemes' shapes laid over the loudness bumps in order."""

from __future__ import annotations

import numpy as np

from app.core.mouth_track import HOP_S, MouthTrack, bumps, mouth_track
from app.core.visemes import Syllable, Viseme, syllables

RATE = 16_000


def _vowelish(seconds: float, f0: float = 140.0) -> np.ndarray:
    """A buzzy periodic sound (harmonics of ``f0``) with soft edges, like a vowel."""
    t = np.arange(int(seconds * RATE)) / RATE
    wave = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 20))
    ramp = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.01)
    return (0.2 * wave * ramp).astype(np.float32)


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


def _syllables_audio() -> tuple[np.ndarray, list[tuple[float, float]]]:
    """Three 'syllables' with gaps; their (start, end) in seconds."""
    parts, spans, t = [], [], 0.0
    for sound, gap in ((0.2, 0.15), (0.25, 0.1), (0.18, 0.2)):
        parts += [_silence(gap), _vowelish(sound)]
        spans.append((t + gap, t + gap + sound))
        t += gap + sound
    parts.append(_silence(0.1))
    return np.concatenate(parts), spans


def test_open_on_sound_closed_in_the_gaps_at_the_right_time() -> None:
    audio, spans = _syllables_audio()
    track = mouth_track(audio, RATE)
    assert abs(track.duration - audio.size / RATE) <= HOP_S
    for start, end in spans:
        assert track.at(start - 0.03) == (Viseme.CLOSED, 0.0)
        assert track.at(start + 0.03)[1] > 0.5
        assert track.at((start + end) / 2)[0] is not Viseme.CLOSED
        assert track.at(end + 0.03) == (Viseme.CLOSED, 0.0)
        # the opening starts within a hop of the sound (the window is centred)
        opens = next(k for k in range(len(track.openings)) if k * HOP_S > start - 0.05
                     and track.openings[k] > 0)
        assert abs(opens * HOP_S - start) <= 0.015
    assert track.at(-0.1) == (Viseme.CLOSED, 0.0)
    assert track.at(track.duration + 0.1) == (Viseme.CLOSED, 0.0)


def test_the_phonemes_shapes_land_on_the_bumps_in_order() -> None:
    audio, spans = _syllables_audio()
    track = mouth_track(audio, RATE, syllables("ba to mi"))
    middle = [track.at((s + e) / 2)[0] for s, e in spans]
    assert middle == [Viseme.A, Viseme.O, Viseme.I]
    # an "i" is said through a narrower mouth than an "a" of the same loudness
    assert track.at(sum(spans[2]) / 2)[1] < track.at(sum(spans[0]) / 2)[1]


def test_more_syllables_than_bumps_keeps_the_order() -> None:
    audio, spans = _syllables_audio()
    nuclei = [Syllable(v) for v in (Viseme.A, Viseme.E, Viseme.I, Viseme.O, Viseme.U, Viseme.A)]
    track = mouth_track(audio, RATE, nuclei)
    first, last = track.at(sum(spans[0]) / 2)[0], track.at(sum(spans[-1]) / 2)[0]
    order = [n.viseme for n in nuclei]
    assert order.index(first) < order.index(track.at(sum(spans[1]) / 2)[0])
    assert last is not Viseme.CLOSED


def test_a_dip_inside_a_sound_splits_two_syllables() -> None:
    sound = _vowelish(0.46)  # one sound whose loudness dips to a third in the middle
    t = np.arange(sound.size) / RATE
    sound *= (1.0 - 0.7 * np.exp(-(((t - 0.23) / 0.03) ** 2))).astype(np.float32)
    audio = np.concatenate([_silence(0.1), sound, _silence(0.1)])
    track = mouth_track(audio, RATE)
    opening = np.array(track.openings)
    assert len(bumps(opening, opening > 0)) == 2


def test_silence_and_nothing() -> None:
    assert mouth_track(np.zeros(0, np.float32), RATE) == MouthTrack((), ())
    quiet = mouth_track(_silence(0.5), RATE)
    assert all(v is Viseme.CLOSED for v in quiet.visemes)
    assert max(quiet.openings) == 0.0


def test_a_lip_consonant_between_two_syllables_shuts_the_mouth_for_a_frame() -> None:
    sound = _vowelish(0.46)  # "ama": one voiced run whose loudness dips at the m
    t = np.arange(sound.size) / RATE
    sound *= (1.0 - 0.7 * np.exp(-(((t - 0.23) / 0.03) ** 2))).astype(np.float32)
    audio = np.concatenate([_silence(0.1), sound, _silence(0.1)])
    with_m = mouth_track(audio, RATE, syllables("ama"))
    with_n = mouth_track(audio, RATE, syllables("ana"))
    shut = [k for k, o in enumerate(with_m.openings) if 0.15 < k * HOP_S < 0.5 and o == 0]
    assert len(shut) >= 3 and max(shut) - min(shut) == len(shut) - 1  # 30 ms, in one piece
    assert abs(shut[1] * HOP_S - 0.33) <= 0.02  # at the dip
    assert all(o > 0 for k, o in enumerate(with_n.openings) if 0.15 < k * HOP_S < 0.5)


def test_no_drift_at_a_rate_whose_10_ms_is_not_whole_samples() -> None:
    rate = 22_050  # Piper's: 10 ms is 220.5 samples
    t = np.arange(int(0.2 * rate)) / rate
    tone = (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
    audio = np.concatenate([np.zeros(int(5.0 * rate), np.float32), tone])
    track = mouth_track(audio, rate)
    assert abs(track.duration - audio.size / rate) <= track.hop_s
    assert track.at(4.985)[1] == 0.0
    assert track.at(5.015)[1] > 0.5
