"""Missing or corrupt model files give one clear EngineLoadError naming the file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.adapters.errors import EngineLoadError


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
