"""Japanese and Chinese text is drawn, not shown as empty boxes: the machine the app is
installed on has a font for both (the .deb and tests/setup.sh install one), and where none
is installed the window says which package to get when a persona speaks that language."""

from __future__ import annotations

import os
from collections.abc import Iterable

import pytest
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics, QImage, QPainter
from pytestqt.qtbot import QtBot

from app.core.pipeline import VoicePipeline
from app.personas.loader import PersonaLibrary
from app.ui import window as window_module
from app.ui.fonts import missing_font_notice
from app.ui.window import MainWindow
from tests.ui.conftest import fake_engines

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _no_fonts(_system: QFontDatabase.WritingSystem) -> list[str]:
    return []


def test_no_notice_for_english_or_with_a_font() -> None:
    assert missing_font_notice(["en-US"], _no_fonts) is None
    assert missing_font_notice(["ja", "zh"], lambda _system: ["Some CJK Sans"]) is None


def test_the_notice_names_the_missing_languages_and_a_package() -> None:
    notice = missing_font_notice(["ja-JP", "en", "cmn"], _no_fonts) or ""
    assert "Japanese and Chinese" in notice and "fonts-noto-cjk" in notice


def test_this_machine_draws_kana_and_hanzi(qtbot: QtBot) -> None:
    """What the installer and setup.sh promise: a font for each script, and the window's
    text really draws glyphs (a box would be the same for every character)."""
    assert missing_font_notice(["ja", "zh"]) is None, missing_font_notice(["ja", "zh"])
    font = QFont()
    font.setPixelSize(32)

    def drawn(text: str) -> bytes:
        image = QImage(QFontMetrics(font).horizontalAdvance(text) + 8, 48,
                       QImage.Format.Format_Grayscale8)
        image.fill(255)
        painter = QPainter(image)
        painter.setFont(font)
        painter.drawText(4, 38, text)
        painter.end()
        return bytes(image.constBits())

    for first, second in (("ひ", "ふ"), ("东", "京")):
        assert drawn(first) != drawn(second), (first, second)


def test_picking_a_japanese_persona_without_a_font_says_so(
        qtbot: QtBot, window: MainWindow, library: PersonaLibrary,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def none_installed(languages: Iterable[str]) -> str | None:
        return missing_font_notice(languages, _no_fonts)

    monkeypatch.setattr(window_module, "missing_font_notice", none_installed)
    pipe = VoicePipeline(fake_engines(), window.persona.full_system_prompt())
    pipe.start()
    try:
        window.attach_pipeline(pipe)
        assert not any("No font" in m for m in window.notices.messages)
        window.sidebar.persona_selected.emit(library.get("yui"))
        assert any(m.startswith("No font for Japanese") for m in window.notices.messages)
    finally:
        window.detach_pipeline()
        pipe.stop()


def test_the_installer_and_setup_name_a_cjk_font() -> None:
    with open(os.path.join(REPO, "assets", "packaging", "deb", "control.in")) as control:
        depends = next(line for line in control if line.startswith("Depends:"))
    assert "fonts-wqy-microhei" in depends and "fonts-noto-cjk" in depends
    with open(os.path.join(REPO, "tests", "setup.sh")) as setup:
        assert "fonts-wqy-microhei" in setup.read()
