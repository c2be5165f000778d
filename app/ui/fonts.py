"""Whether this machine can draw Japanese and Chinese text at all.

Qt falls back through every installed font for characters the window's font lacks, but a
machine with no CJK font shows a Japanese persona's words as empty boxes (seen on a
minimal Debian with the .deb before it named a CJK font). The installer depends on one
(``fonts-wqy-microhei | fonts-noto-cjk | ...``); an install without it gets one notice
naming the package, instead of boxes and no explanation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtGui import QFontDatabase

from app.core.languages import base_language, language_name

_SYSTEMS = {
    "ja": QFontDatabase.WritingSystem.Japanese,
    "zh": QFontDatabase.WritingSystem.SimplifiedChinese,
}
FONT_HINT = "sudo apt install fonts-noto-cjk, or fonts-wqy-microhei"
"""What to install on Debian/Ubuntu (either covers Japanese and Chinese)."""

FamiliesFor = Callable[[QFontDatabase.WritingSystem], list[str]]


def missing_font_notice(
    languages: Iterable[str], families_for: FamiliesFor = QFontDatabase.families
) -> str | None:
    """One line when no installed font can draw one of ``languages`` (base codes or tags),
    else None. Needs a QGuiApplication (the font database); GUI thread."""
    missing = [
        code for code in dict.fromkeys(base_language(tag) for tag in languages)
        if code in _SYSTEMS and not families_for(_SYSTEMS[code])
    ]
    if not missing:
        return None
    names = " and ".join(language_name(code) for code in missing)
    return (f"No font for {names} is installed, so {names} text shows as empty boxes: "
            f"install a font for it ({FONT_HINT}) and restart Hanasu")
