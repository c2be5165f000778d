"""Builds the four engines from the resolved models (or the fakes).

This is the one place that decides which adapter serves a role; the pipeline only sees
the ports.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from app.core.pipeline import Engines
from app.core.ports import (
    ChatMessage,
    EchoCanceller,
    LanguageModel,
    SpeakerEncoder,
    SpeechSynthesizer,
    TurnDetector,
)

if TYPE_CHECKING:
    from app.models.resolve import ResolvedModel
    from app.storage.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

EMBEDDED_LLM_LANGUAGES = ("en",)
"""SmolLM2-135M-Instruct answers in English; in Japanese or Chinese it loops or babbles."""
Progress = Callable[[str], None]


@dataclass(frozen=True)
class EngineChoice:
    """What the user asked for; None means "resolve the best available model"."""

    fake: bool = False
    llm: Path | None = None
    asr: Path | None = None
    tts: Path | None = None
    n_gpu_layers: int | None = None
    llm_threads: int | None = None
    """LLM decode threads (None: ``default_threads``); ``run``/``bench --llm-threads``."""
    llm_seed: int | None = None
    """The local model's sampling seed (None: a new one each load); ``bench --llm-seed``
    makes two runs of a benchmark answer the same words with the same replies."""
    llm_url: str | None = None
    """An OpenAI-compatible server to use instead of a local model file ("" = none set)."""
    llm_model: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)
    tts_voice: str | None = None
    tts_speed: float = 1.0
    tier: str | None = None
    """The model tier the user picked (Models dialog); its models load first when present."""

    def variant(self, role: str) -> str | None:
        """The chosen tier's manifest variant for ``role``, or None (no choice, or unknown)."""
        if self.tier is None:
            return None
        from app.models.catalog import load_catalog
        from app.models.errors import ModelError

        try:
            tier = load_catalog().tiers.get(self.tier)
        except ModelError:
            return None
        return getattr(tier, role, None) if tier is not None else None

    @classmethod
    def from_settings(cls, settings: Settings, fake: bool = False) -> EngineChoice:
        """The engines the user's settings ask for; unset paths mean "resolve the best model".

        Lives here, not in app.storage, so storage never imports the composition root.
        """

        def as_path(value: str | None) -> Path | None:
            return Path(value).expanduser() if value else None

        server = settings.llm_backend == "server"
        return cls(
            fake=fake,
            llm=as_path(settings.llm_path),
            asr=as_path(settings.asr_path),
            tts=as_path(settings.tts_path),
            n_gpu_layers=settings.n_gpu_layers,
            llm_url=(settings.llm_server_url or "") if server else None,
            llm_model=settings.llm_server_model,
            llm_api_key=settings.llm_api_key,
            tts_voice=settings.tts_voice,
            tts_speed=settings.tts_speed,
            tier=settings.model_tier,
        )


def _note(progress: Progress | None, message: str) -> None:
    log.info(message)
    if progress is not None:
        progress(message)


def build_engines(
    choice: EngineChoice,
    progress: Progress | None = None,
    on_loading: Callable[[str], None] | None = None,
) -> Engines:
    """Load every engine; raises EngineLoadError / ModelError with a one-line message.

    ``progress`` gets sentences for the user; ``on_loading`` gets the role ("vad", "asr",
    "llm", "tts") as each starts loading, so callers that time the loads (the self-test)
    read that, never the wording of the sentences.
    """

    def loading(role: str, message: str) -> None:
        if on_loading is not None:
            on_loading(role)
        _note(progress, message)

    if choice.fake:
        from app.adapters.fakes import (
            FakeLanguageModel,
            FakeRecognizer,
            FakeSpeakerEncoder,
            FakeSynthesizer,
            FakeVoiceActivity,
        )

        fake_llm = _server_llm(choice) if choice.llm_url is not None else FakeLanguageModel()
        return Engines(FakeVoiceActivity(), FakeRecognizer(), fake_llm, FakeSynthesizer(),
                       speaker=FakeSpeakerEncoder())

    from app.adapters.llama_llm import LlamaLanguageModel
    from app.adapters.multilingual_asr import LanguageAwareRecognizer, load_multilingual_whisper
    from app.adapters.sampling import SamplingConfig
    from app.adapters.silero_vad import SileroVad
    from app.adapters.whisper_asr import WhisperRecognizer
    from app.models.resolve import resolve

    started = time.perf_counter()
    loading("vad", "Loading voice activity detector")
    vad_model = resolve("vad")
    vad = _repairable(vad_model, lambda: SileroVad(vad_model.path))
    loading("asr", "Loading speech recognizer")
    asr_model = resolve("asr", explicit=choice.asr, variant=choice.variant("asr"))
    asr = LanguageAwareRecognizer(  # English as before; ja/zh load a multilingual model
        _repairable(asr_model, lambda: WhisperRecognizer(asr_model.path)),
        load_multilingual_whisper,
    )
    loading("llm", "Loading language model")
    llm: LanguageModel
    llm_languages: tuple[str, ...] | None = None
    if choice.llm_url is not None:
        llm = _server_llm(choice)
    else:
        llm_model = resolve("llm", explicit=choice.llm, variant=choice.variant("llm"))
        llm = _repairable(
            llm_model, lambda: LlamaLanguageModel(
                llm_model.path, n_gpu_layers=choice.n_gpu_layers, n_threads=choice.llm_threads,
                sampling=SamplingConfig(seed=choice.llm_seed) if choice.llm_seed else None)
        )
        if llm_model.source == "embedded":  # SmolLM2-135M: English only
            llm_languages = EMBEDDED_LLM_LANGUAGES
    loading("tts", "Loading voice")
    tts, notices = _voice(choice, progress)
    speaker = build_speaker_encoder()
    _note(progress, f"Engines ready in {time.perf_counter() - started:.1f} s")
    return Engines(vad=vad, asr=asr, llm=llm, tts=tts, notices=notices,
                   llm_languages=llm_languages, speaker=speaker)


def repair_hint(model: ResolvedModel) -> str:
    """What the user can do about a model file that does not load ("" for their own file)."""
    if model.source == "explicit":
        return ""
    if model.source == "embedded":
        return "`hanasu models verify` checks it; reinstalling hanasu restores it"
    variant = model.entry.variant if model.entry is not None else None
    return f"`hanasu models verify` checks it; {_download(model.role, variant)}"


def _download(role: str, variant: str | None = None) -> str:
    from app.models.checks import download_hint

    fix = download_hint(role, variant) if variant else download_hint(role)
    return f"{fix.removeprefix('run ')} re-downloads it"


def _repairable(model: ResolvedModel, load: Callable[[], T]) -> T:
    """``load()``, with the repair command added to its EngineLoadError (a corrupt file)."""
    from app.adapters.errors import EngineLoadError

    try:
        return load()
    except EngineLoadError as exc:
        hint = repair_hint(model)
        if not hint:
            raise
        raise EngineLoadError(f"{exc.message}; {hint}") from exc


def _voice(
    choice: EngineChoice, progress: Progress | None
) -> tuple[SpeechSynthesizer, tuple[str, ...]]:
    """The voices and the notices about them: the English voice chosen as below, with a
    Japanese and a Mandarin voice beside it, loaded when a persona or a reply needs them
    (app.adapters.language_voices; CJK text never reaches the English voice)."""
    from app.adapters.language_voices import LanguageVoices

    english, notices = _english_voice(choice, progress)
    return LanguageVoices(english, speed=choice.tts_speed), notices


def _english_voice(
    choice: EngineChoice, progress: Progress | None
) -> tuple[SpeechSynthesizer, tuple[str, ...]]:
    """The chosen voice and the notices about it.

    If the automatically found voice cannot load, the robotic but always-available eSpeak
    voice keeps the app talking, and a notice says so (an explicit choice must load).
    """
    from app.adapters.errors import EngineLoadError
    from app.models.errors import ModelError
    from app.models.resolve import resolve

    if choice.tts is not None:
        explicit = resolve("tts", explicit=choice.tts)
        return _synthesizer(explicit.path, choice), ()
    model: ResolvedModel | None = None
    try:
        model = resolve("tts", variant=choice.variant("tts"))
        return _synthesizer(model.path, choice), ()
    except (EngineLoadError, ModelError) as exc:
        from app.adapters.espeak_tts import EspeakSynthesizer

        _note(progress, f"Voice unavailable ({exc}); using the eSpeak fallback voice")
        return EspeakSynthesizer(), (_fallback_notice(model, exc),)


def _fallback_notice(model: ResolvedModel | None, problem: Exception) -> str:
    """One line for the user: which voice failed, why, that eSpeak speaks instead, the fix."""
    # resolve() may fail before naming a model; its message names the file then
    where = model.path.name if model is not None else str(problem)
    name = "Kokoro voice" if "kokoro" in where.lower() else "The voice"
    notice = f"{name} could not load ({problem}): speaking with eSpeak instead"
    if "hanasu models" in str(problem):  # resolve()'s own errors already name the command
        return notice
    return f"{notice}; {repair_hint(model) if model is not None else _download('tts')}"


def _server_llm(choice: EngineChoice) -> LanguageModel:
    """The language model on an OpenAI-compatible server (connects on first use)."""
    from app.adapters.openai_llm import OpenAILanguageModel

    return OpenAILanguageModel(choice.llm_url or "", choice.llm_model, choice.llm_api_key)


def _synthesizer(path: Path, choice: EngineChoice) -> SpeechSynthesizer:
    if path.name.startswith("kokoro"):
        from app.adapters.kokoro_tts import KokoroSynthesizer

        voices = path.parent / "voices-v1.0.bin"
        return KokoroSynthesizer(
            path, voices, voice=choice.tts_voice or "af_heart", speed=choice.tts_speed
        )
    from app.adapters.piper_tts import PiperSynthesizer

    return PiperSynthesizer(path, length_scale=1.0 / choice.tts_speed)


def build_echo_canceller() -> EchoCanceller:
    """WebRTC AEC3: removes the assistant's own voice from the microphone signal."""
    from app.adapters.echo import WebRtcEchoCanceller

    return WebRtcEchoCanceller()


def build_speaker_encoder() -> SpeakerEncoder | None:
    """The voice print encoder, or None (every voice is heard) when it is not installed."""
    from app.adapters.errors import EngineLoadError
    from app.adapters.voice_encoder import VoiceEncoder

    try:
        return VoiceEncoder()
    except EngineLoadError as exc:
        log.warning("voices are not told apart: %s", exc)
        return None


def build_turn_detector() -> TurnDetector | None:
    """Smart Turn v3.2, or None (end of turn by silence alone) when it is not installed."""
    from app.adapters.errors import EngineLoadError
    from app.adapters.smart_turn import SmartTurnDetector

    try:
        return SmartTurnDetector()
    except EngineLoadError as exc:
        log.warning("end of turn by silence only: %s", exc)
        return None


def warm_engines(engines: Engines, system_prompt: str) -> None:
    """Run each engine once so the first turn pays no first-call costs
    (ONNX graph optimisation, CTranslate2 allocation, the persona's prompt prefix)."""
    engines.tts.synthesize("Hello.")
    warm_asr = getattr(engines.asr, "warm", None)
    if callable(warm_asr):  # Whisper: both of its paths, on noise (silence skips the model)
        warm_asr()
    else:
        engines.asr.transcribe(np.zeros(16_000, dtype=np.float32))
    engines.vad.probability(np.zeros(engines.vad.frame_size, dtype=np.float32))
    engines.vad.reset()
    engines.llm.warm([ChatMessage("system", system_prompt)])
