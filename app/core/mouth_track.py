"""A chunk's mouth timeline, computed from its audio once, before it plays.

No voice here reports phoneme durations (Kokoro's ONNX outputs only audio; Piper's needs
a patched model), so the audio gives the timing: every ``HOP_S`` the opening is the
loudness, normalised to the chunk, and the shape is chosen either from the phonemes the
engine said (their nuclei, in order, over the audio's syllable-sized loudness bumps) or,
with no phonemes, from the spectrum (``spectral_viseme``). The synthesizer's thread runs
this (a few milliseconds a sentence); playback only stamps when the chunk starts to
sound, so the face reads the shape at the sample the speaker plays.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from app.core.events import FloatAudio
from app.core.visemes import Syllable, Viseme, openness

HOP_S = 0.01
WINDOW_S = 0.02
"""Loudness window, centred on each hop: an onset shows at most 10 ms before it sounds."""
SILENT = 0.12
"""Below this fraction of the chunk's loud level the mouth is closed."""
HISS_PER_S = 4000
"""Zero crossings a second above which a hop is a hiss (s, sh, f, a breath): vowels and
voiced consonants cross 800-3000 times a second, eSpeak's and Piper's fricatives
4500-12000. A hiss is said with the teeth together, so the mouth shows it closed and opens
on the vowel that follows."""
SPLIT_DIP = 0.7
"""A dip below this fraction of the smaller bump on either side splits two syllables."""
LIP_CLOSURE = 3
"""Hops (30 ms) a p, b or m inside a voiced run shuts the mouth for."""
CODES = tuple(Viseme)
_BANDS = (150, 500, 900, 1400, 2000, 3200, 4500)


@dataclass(frozen=True)
class MouthTrack:
    """Per ``hop_s`` from the chunk's first sample: how open (0..1) and which shape.
    ``hop_s`` is a whole number of samples (9.977 ms at 22.05 kHz: a 10 ms step would
    drift 12 ms over a 5 s sentence)."""

    openings: tuple[float, ...]
    visemes: tuple[Viseme, ...]
    hop_s: float = HOP_S

    def at(self, t: float) -> tuple[Viseme, float]:
        """Shape and opening ``t`` seconds into the chunk (closed outside it)."""
        k = int(t / self.hop_s) if t >= 0 else -1
        if not 0 <= k < len(self.openings):
            return Viseme.CLOSED, 0.0
        return self.visemes[k], self.openings[k]

    @property
    def duration(self) -> float:
        return len(self.openings) * self.hop_s


def _hop(rate: int) -> int:
    return max(1, round(HOP_S * rate))


def loudness(samples: FloatAudio, rate: int) -> FloatAudio:
    """RMS per hop over a centred ``WINDOW_S`` window."""
    hop = _hop(rate)
    frames = -(-samples.size // hop)
    half = round(WINDOW_S * rate / 2)
    padded = np.concatenate([np.zeros(half, np.float32), samples.astype(np.float32),
                             np.zeros(half + hop, np.float32)])
    energy = np.concatenate([[0.0], np.cumsum(np.square(padded, dtype=np.float64))])
    starts = np.arange(frames) * hop + hop // 2  # the window's centre, in padded samples
    total = energy[starts + 2 * half] - energy[starts]
    rms: FloatAudio = np.sqrt(total / max(1, 2 * half)).astype(np.float32)
    return rms


def crossings(samples: FloatAudio, rate: int, hops: int) -> FloatAudio:
    """Zero crossings a second in each hop."""
    hop = _hop(rate)
    changes = np.zeros(hops * hop, dtype=np.float32)
    flips = np.diff(np.signbit(samples)).astype(np.float32)
    changes[:min(flips.size, changes.size)] = flips[:changes.size]
    per_hop: FloatAudio = changes.reshape(hops, hop).sum(axis=1) * (rate / hop)
    return per_hop


def mouth_track(samples: FloatAudio, rate: int,
                nuclei: list[Syllable] | None = None) -> MouthTrack:
    """The timeline of ``samples``; ``nuclei`` from the phonemes when the engine gave
    them (None: shapes from the spectrum)."""
    level = loudness(samples, rate)
    if not level.size:
        return MouthTrack((), ())
    loud = max(float(np.percentile(level, 95)), 1e-4)
    opening = np.clip(level / loud, 0.0, 1.0)
    voiced = (opening >= SILENT) & (crossings(samples, rate, level.size) <= HISS_PER_S)
    if nuclei:
        shapes = _shapes_from_nuclei(opening, voiced, nuclei)
    else:
        shapes = _shapes_from_spectrum(samples, rate, voiced)
    opening = np.where(voiced, opening, 0.0)
    return MouthTrack(tuple(round(float(o), 3) for o in opening),
                      tuple(CODES[c] for c in shapes), hop_s=_hop(rate) / rate)


def bumps(opening: FloatAudio, voiced: np.ndarray) -> list[tuple[int, int]]:
    """Syllable-sized stretches [start, end) of voiced hops: voiced runs, split where the
    loudness dips well below the bumps on either side (a consonant between vowels)."""
    found: list[tuple[int, int]] = []
    smooth = np.convolve(opening, np.ones(3) / 3, mode="same")
    edges = np.flatnonzero(np.diff(np.concatenate([[0], voiced.astype(np.int8), [0]])))
    for start, end in zip(edges[::2], edges[1::2], strict=True):
        cut = start
        for k in range(start + 2, end - 2):
            if smooth[k] <= smooth[k - 1] and smooth[k] < smooth[k + 1]:
                left, right = smooth[cut:k].max(), smooth[k + 1:end].max()
                if smooth[k] < SPLIT_DIP * min(left, right) and k - cut >= 4:
                    found.append((cut, k))
                    cut = k
        found.append((cut, end))
    return found


def _shapes_from_nuclei(opening: FloatAudio, voiced: np.ndarray,
                        nuclei: list[Syllable]) -> np.ndarray:
    """Each bump takes the nucleus at its place in the sentence (bumps and nuclei are
    matched in proportion, so a merged or split syllable shifts one shape, not the rest);
    a diphthong glides in its last third; a lip consonant between two bumps shuts the
    mouth for ``LIP_CLOSURE`` hops around the dip (one frame of the face at least)."""
    shapes = np.zeros(opening.size, dtype=np.int8)
    stretches = bumps(opening, voiced)
    count = len(stretches)
    for j, (start, end) in enumerate(stretches):
        nucleus = nuclei[min(len(nuclei) - 1, int((j + 0.5) * len(nuclei) / count))]
        shapes[start:end] = CODES.index(nucleus.viseme)
        if nucleus.glide is not None and end - start >= 6:
            shapes[end - (end - start) // 3:end] = CODES.index(nucleus.glide)
        opening[start:end] *= 0.55 + 0.45 * openness(nucleus.viseme)
        if nucleus.closed_before and start > 0 and voiced[start - 1]:
            shut = slice(max(0, start - 1), min(end - 1, start - 1 + LIP_CLOSURE))
            shapes[shut] = 0
            opening[shut] = 0.0
    return shapes


def spectral_viseme(bands: FloatAudio) -> Viseme:
    """A vowel's shape from its energy in ``_BANDS`` (fractions summing to 1): all low is a
    closed vowel ("i" if it has a high second formant, else "u"); a high second formant
    with an open first is "e"; much low energy left with an open first is "o"; else "a"."""
    return CODES[int(_classify(bands[np.newaxis, :])[0])]


def _classify(shares: np.ndarray) -> np.ndarray:
    """``spectral_viseme`` for rows of band shares at once: the shapes' codes."""
    low, f2_high, top = shares[:, 0], shares[:, 3] + shares[:, 4], shares[:, 4] + shares[:, 5]
    codes = np.where(low >= 0.22, CODES.index(Viseme.O), CODES.index(Viseme.A))
    codes = np.where(f2_high >= 0.2, CODES.index(Viseme.E), codes)
    closed_vowel = np.where(top >= 0.12, CODES.index(Viseme.I), CODES.index(Viseme.U))
    return np.where(low >= 0.55, closed_vowel, codes).astype(np.int8)


def band_shares(frames: np.ndarray, rate: int) -> np.ndarray:
    """The share of each frame's (row's) energy in each of ``_BANDS``."""
    size = frames.shape[-1]
    power = np.square(np.abs(np.fft.rfft(frames * np.hanning(size), axis=-1)))
    freqs = np.fft.rfftfreq(size, 1.0 / rate)
    shares = np.stack([power[..., (freqs >= lo) & (freqs < hi)].sum(axis=-1)
                       for lo, hi in itertools.pairwise(_BANDS)], axis=-1)
    result: np.ndarray = shares / np.maximum(shares.sum(axis=-1, keepdims=True), 1e-12)
    return result


def _shapes_from_spectrum(samples: FloatAudio, rate: int, voiced: np.ndarray) -> np.ndarray:
    """A shape per voiced hop from a 32 ms spectrum (all hops in one FFT call, so the
    synthesizer's thread holds the interpreter briefly), then a 5-hop majority so the
    mouth does not flicker between neighbouring vowels."""
    hop, size = _hop(rate), round(0.032 * rate)
    padded = np.concatenate([np.zeros(size // 2, np.float32), samples.astype(np.float32),
                             np.zeros(size + hop, np.float32)])
    raw = np.zeros(voiced.size, dtype=np.int8)
    at = np.flatnonzero(voiced)
    if at.size:
        frames = np.lib.stride_tricks.sliding_window_view(padded, size)[at * hop + hop // 2]
        raw[at] = _classify(band_shares(frames, rate))
    shapes = raw.copy()
    for k in at:
        window = raw[max(0, k - 2):k + 3]
        window = window[window > 0]
        shapes[k] = np.bincount(window).argmax() if window.size else raw[k]
    return shapes
