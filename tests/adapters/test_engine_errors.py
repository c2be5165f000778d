"""Missing or corrupt model files give one clear EngineLoadError naming the file."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.adapters.errors import EngineLoadError
from app.adapters.sampling import SamplingConfig


def garbage(path: Path) -> Path:
    path.write_bytes(b"this is not a model\n" * 64)
    return path


def test_error_message_is_just_the_message() -> None:
    err = EngineLoadError("VAD model not found: /x/y.onnx")
    assert str(err) == "VAD model not found: /x/y.onnx"


def test_vad_missing_and_corrupt(tmp_path: Path) -> None:
    from app.adapters.silero_vad import SileroVad

    with pytest.raises(EngineLoadError, match=r"nope\.onnx"):
        SileroVad(tmp_path / "nope.onnx")
    with pytest.raises(EngineLoadError, match=r"bad\.onnx.*could not be loaded"):
        SileroVad(garbage(tmp_path / "bad.onnx"))


def test_whisper_missing_incomplete_and_corrupt(tmp_path: Path) -> None:
    from app.adapters.whisper_asr import WhisperRecognizer, embedded_model_dir

    with pytest.raises(EngineLoadError, match=r"no-such-model"):
        WhisperRecognizer(tmp_path / "no-such-model")
    partial = tmp_path / "partial"
    partial.mkdir()
    garbage(partial / "model.bin")
    with pytest.raises(EngineLoadError, match=r"partial.*missing config\.json, tokenizer\.json"):
        WhisperRecognizer(partial)
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copy(embedded_model_dir() / name, broken / name)
    garbage(broken / "model.bin")
    with pytest.raises(EngineLoadError, match=r"broken"):
        WhisperRecognizer(broken)


def test_llm_missing_not_gguf_and_truncated(tmp_path: Path, tiny_llama_gguf: Path) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel

    with pytest.raises(EngineLoadError, match=r"absent\.gguf"):
        LlamaLanguageModel(tmp_path / "absent.gguf")
    with pytest.raises(EngineLoadError, match=r"junk\.gguf is not a GGUF"):
        LlamaLanguageModel(garbage(tmp_path / "junk.gguf"))
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(tiny_llama_gguf.read_bytes()[:5_000])
    with pytest.raises(EngineLoadError, match=r"truncated\.gguf"):
        LlamaLanguageModel(truncated)


def test_piper_missing_and_corrupt(tmp_path: Path) -> None:
    from app.adapters.piper_tts import PiperSynthesizer, embedded_voice_path

    with pytest.raises(EngineLoadError, match=r"gone\.onnx"):
        PiperSynthesizer(tmp_path / "gone.onnx")
    no_config = garbage(tmp_path / "lonely.onnx")
    with pytest.raises(EngineLoadError, match=r"lonely\.onnx\.json"):
        PiperSynthesizer(no_config)
    bad = garbage(tmp_path / "bad.onnx")
    shutil.copy(Path(f"{embedded_voice_path()}.json"), tmp_path / "bad.onnx.json")
    with pytest.raises(EngineLoadError, match=r"bad\.onnx"):
        PiperSynthesizer(bad)
    broken_config = garbage(tmp_path / "cfg.onnx")
    (tmp_path / "cfg.onnx.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(EngineLoadError, match=r"cfg\.onnx\.json"):
        PiperSynthesizer(broken_config)


def test_kokoro_missing_and_corrupt_files(tmp_path: Path) -> None:
    from app.adapters.kokoro_tts import KokoroSynthesizer

    model = garbage(tmp_path / "kokoro-v1.0.int8.onnx")
    voices = garbage(tmp_path / "voices-v1.0.bin")
    with pytest.raises(EngineLoadError, match=r"missing\.onnx"):
        KokoroSynthesizer(tmp_path / "missing.onnx", voices)
    with pytest.raises(EngineLoadError, match=r"no-voices\.bin"):
        KokoroSynthesizer(model, tmp_path / "no-voices.bin")
    with pytest.raises(EngineLoadError, match=r"voices-v1\.0\.bin is corrupt"):
        KokoroSynthesizer(model, voices)


def test_espeak_unknown_voice() -> None:
    from app.adapters.espeak_tts import EspeakSynthesizer

    with pytest.raises(EngineLoadError, match=r"no voice 'xx-nope'"):
        EspeakSynthesizer(voice="xx-nope")


def test_importing_adapters_loads_no_engine_library() -> None:
    """Adapters import their engines lazily, so the app starts fast and fakes need none."""
    code = (
        "import sys\n"
        "import app.adapters.errors, app.adapters.resample, app.adapters.silero_vad\n"
        "import app.adapters.whisper_asr, app.adapters.llama_llm, app.adapters.piper_tts\n"
        "import app.adapters.kokoro_tts, app.adapters.espeak_tts\n"
        "heavy = ('onnxruntime', 'faster_whisper', 'ctranslate2', 'llama_cpp', 'piper',\n"
        "         'kokoro_onnx', 'soxr', 'espeakng_loader')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


# ---- issue 12: over-long persona prompt, voice fallback notices, repair hints ----------


def long_prompt(chars: int = 30_000) -> str:
    """Plain sentences, ``chars`` long: far more tokens than a 4,096-token context."""
    sentence = "The captain sailed past seven quiet islands before the storm came in. "
    return (sentence * (chars // len(sentence) + 1))[:chars]


@pytest.mark.slow
def test_persona_prompt_longer_than_the_context_is_one_clear_error() -> None:
    """Checked before decoding; llama.cpp itself only says "llama_decode returned 1"."""
    from app.adapters.llama_llm import LlamaLanguageModel, PromptTooLongError
    from app.core.ports import ChatMessage

    llm = LlamaLanguageModel(n_ctx=4096, sampling=SamplingConfig(max_tokens=200))
    system = ChatMessage("system", long_prompt())
    with pytest.raises(PromptTooLongError) as caught:
        llm.warm([system])
    message = str(caught.value)
    assert re.fullmatch(
        r"the persona's prompt is [\d,]+ tokens; the model's context holds 3,896 with room "
        r"for a reply: shorten the persona's system prompt",
        message,
    ), message
    assert caught.value.tokens > 4096
    with pytest.raises(PromptTooLongError, match=r"shorten the persona's system prompt"):
        list(llm.stream([system, ChatMessage("user", "Hi")], cancelled=lambda: False))
    # the model is still usable with a prompt that fits
    stats = llm.warm([ChatMessage("system", "You are brief.")])
    assert 0 < stats.prompt_tokens < 100


def corrupt_kokoro(data_dir: Path) -> Path:
    """The production Kokoro files at the right size, but all zeros (a broken download)."""
    from app.models.catalog import load_catalog

    [entry] = [e for e in load_catalog().downloadable("tts") if "kokoro" in e.main]
    root = data_dir / "models" / (entry.dir or entry.variant)
    root.mkdir(parents=True)
    for file in entry.files:
        with (root / file.name).open("wb") as fh:
            fh.truncate(file.size or 1_000_000)
    return root


def test_a_voice_that_falls_back_to_espeak_gives_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.adapters.espeak_tts import EspeakSynthesizer
    from app.engines import EngineChoice, _voice

    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "data"))
    corrupt_kokoro(tmp_path / "data")
    tts, notices = _voice(EngineChoice(), None)
    assert isinstance(tts.english, EspeakSynthesizer)  # type: ignore[attr-defined]
    [notice] = notices
    assert notice.startswith("Kokoro voice could not load (")
    assert "speaking with eSpeak instead" in notice
    assert "hanasu models download tts" in notice
    assert "\n" not in notice


def test_a_voice_that_loads_gives_no_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.engines import EngineChoice, _voice

    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "empty"))
    _, notices = _voice(EngineChoice(), None)
    assert notices == ()


def test_a_managed_model_that_fails_to_load_says_how_to_repair_it(tmp_path: Path) -> None:
    from app.engines import _repairable
    from app.models.catalog import load_catalog
    from app.models.resolve import ResolvedModel

    def broken() -> None:
        raise EngineLoadError(f"speech recognizer {tmp_path} could not be loaded: bad file")

    [entry, *_] = load_catalog().downloadable("asr")
    downloaded = ResolvedModel("asr", tmp_path, "user-data", entry, 1)
    with pytest.raises(EngineLoadError) as caught:
        _repairable(downloaded, broken)
    assert str(caught.value).endswith(
        "bad file; `hanasu models verify` checks it; `hanasu models download asr` re-downloads it"
    ) or "--variant" in str(caught.value)
    embedded = ResolvedModel("asr", tmp_path, "embedded", None, 1)
    with pytest.raises(EngineLoadError, match=r"reinstalling hanasu restores it$"):
        _repairable(embedded, broken)
    own_file = ResolvedModel("asr", tmp_path, "explicit", None, 1)
    with pytest.raises(EngineLoadError, match=r"could not be loaded: bad file$"):
        _repairable(own_file, broken)


def test_self_test_shows_each_notice_as_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.engines
    from app.adapters.fakes import (
        FakeLanguageModel,
        FakeRecognizer,
        FakeSynthesizer,
        FakeVoiceActivity,
    )
    from app.cli.selftest import Report, load_engines
    from app.core.pipeline import Engines

    notice = "Kokoro voice could not load (bad file): speaking with eSpeak instead"

    def build(choice: object, progress: object = None, on_loading: object = None) -> Engines:
        return Engines(
            FakeVoiceActivity(), FakeRecognizer(), FakeLanguageModel(), FakeSynthesizer(),
            notices=(notice,),
        )

    monkeypatch.setattr(app.engines, "build_engines", build)
    lines: list[str] = []
    report = Report(write=lines.append)
    assert load_engines(report, {}) is not None
    assert [c.detail for c in report.checks if c.status == "WARN"][:1] == [notice]
    assert not report.failed
