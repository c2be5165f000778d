"""One dark theme for the whole app, so every widget shares the same palette and spacing."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.paths import assets_dir

BG = "#12141c"
CARD = "#1b1e2a"
CARD_HI = "#242838"
BORDER = "#2c3144"
TEXT = "#e8eaf2"
MUTED_TEXT = "#8a90a6"
UNHEARD_TEXT = "#565c72"
ACCENT = "#7c8cff"
DANGER = "#ff5d6c"
WARNING = "#f2b134"
FOCUS = "#b8c1ff"
"""The keyboard focus ring: lighter than the accent (hover), so the two never look alike."""

STYLESHEET = f"""
QMainWindow, QDialog {{ background: {BG}; }}
QWidget {{ color: {TEXT}; font-size: 13px; }}
QLabel#title {{ font-size: 20px; font-weight: 600; }}
QLabel#subtitle {{ color: {MUTED_TEXT}; }}
QLabel#statusText {{ color: {MUTED_TEXT}; font-size: 13px; }}
QLabel#sectionLabel {{ color: {MUTED_TEXT}; font-size: 11px; font-weight: 600;
    letter-spacing: 1px; }}
QFrame#card {{ background: {CARD}; border: 1px solid {BORDER}; border-radius: 16px; }}
QFrame#banner {{ background: #3a1820; border: 1px solid {DANGER}; border-radius: 12px; }}
QFrame#banner QLabel {{ color: #ffd5da; }}
QFrame#progressCard {{ background: {CARD_HI}; border: 1px solid {BORDER}; border-radius: 12px; }}
QListWidget {{ background: transparent; border: 1px solid transparent; border-radius: 12px;
    outline: none; }}
QListWidget:focus {{ border-color: {BORDER}; }}
QListWidget::item {{ border: 2px solid transparent; border-radius: 12px; padding: 2px;
    margin: 2px 0; }}
QListWidget::item:hover {{ background: {CARD_HI}; }}
QListWidget::item:selected {{ background: #2b3150; }}
QListWidget::item:focus {{ border-color: {FOCUS}; }}
QScrollArea {{ background: transparent; border: none; }}
QScrollArea > QWidget > QWidget {{ background: transparent; }}
QScrollBar:vertical {{ background: transparent; width: 8px; margin: 4px 0; }}
QScrollBar::handle:vertical {{ background: {BORDER}; border-radius: 4px; min-height: 24px; }}
QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical {{ height: 0; }}
QPushButton, QToolButton {{ background: {CARD_HI}; border: 1px solid {BORDER};
    border-radius: 10px; padding: 7px 14px; }}
QPushButton:hover, QToolButton:hover {{ border-color: {ACCENT}; }}
QPushButton:focus, QToolButton:focus {{ border: 2px solid {FOCUS}; padding: 6px 13px; }}
QPushButton:disabled, QToolButton:disabled {{ color: {UNHEARD_TEXT}; background: {CARD};
    border-color: {CARD_HI}; }}
QPushButton#primary {{ background: {ACCENT}; border-color: {ACCENT}; color: #0d0f18;
    font-weight: 600; }}
QPushButton#primary:focus {{ border: 2px solid {TEXT}; }}
QToolButton#muteButton:checked {{ background: #4a1d27; border-color: {DANGER}; color: #ffd5da; }}
QToolButton#hudButton:checked {{ border-color: {ACCENT}; color: {ACCENT}; }}
QMenuBar {{ background: {BG}; }}
QMenuBar::item:selected {{ background: {CARD_HI}; border-radius: 6px; }}
QMenu {{ background: {CARD}; border: 1px solid {BORDER}; padding: 6px; }}
QMenu::item {{ padding: 6px 18px; border-radius: 6px; }}
QMenu::item:selected {{ background: {CARD_HI}; }}
QComboBox, QSpinBox, QDoubleSpinBox, QLineEdit {{ background: {CARD_HI};
    border: 1px solid {BORDER}; border-radius: 8px; padding: 5px 8px; }}
QPlainTextEdit, QTextEdit {{ background: {CARD_HI}; border: 1px solid {BORDER};
    border-radius: 8px; }}
QComboBox:focus, QAbstractSpinBox:focus, QLineEdit:focus, QPlainTextEdit:focus,
QTextEdit:focus {{ border: 1px solid {FOCUS}; }}
QCheckBox:focus, QRadioButton:focus {{ color: {FOCUS}; }}
QSlider:focus::handle:horizontal {{ border: 2px solid {FOCUS}; }}
QAbstractSpinBox {{ padding-right: 24px; }}
QComboBox::drop-down {{ subcontrol-origin: padding; subcontrol-position: center right;
    width: 24px; border: none; }}
QAbstractSpinBox::up-button, QAbstractSpinBox::down-button {{ subcontrol-origin: border;
    width: 20px; border: none; background: transparent; }}
QAbstractSpinBox::up-button {{ subcontrol-position: top right; }}
QAbstractSpinBox::down-button {{ subcontrol-position: bottom right; }}
QAbstractSpinBox::up-button:hover, QAbstractSpinBox::down-button:hover {{
    background: {BORDER}; border-radius: 4px; }}
QProgressBar {{ background: {CARD_HI}; border: none; border-radius: 4px; height: 8px;
    text-align: center; color: transparent; }}
QProgressBar::chunk {{ background: {ACCENT}; border-radius: 4px; }}
QSlider::groove:horizontal {{ background: {CARD_HI}; height: 6px; border-radius: 3px; }}
QSlider::handle:horizontal {{ background: {ACCENT}; width: 16px; margin: -5px 0;
    border-radius: 8px; }}
QToolTip {{ background: {CARD}; color: {TEXT}; border: 1px solid {BORDER}; }}
"""


def _spin_arrows() -> str:
    """Arrow images for spin and combo boxes. A styled spin box loses Fusion's arrows, and
    hiding the buttons instead (``NoButtons``) makes Qt shrink the text field to one pixel,
    so the value disappears: we keep the buttons and draw them from two small SVGs."""
    icons = assets_dir() / "icons"
    rules = [("QAbstractSpinBox::up-arrow", "up"), ("QAbstractSpinBox::down-arrow", "down"),
             ("QComboBox::down-arrow", "down")]
    return "".join(
        f"{selector} {{ image: url({(icons / f'spin-{kind}.svg').as_posix()});"
        " width: 10px; height: 6px; }\n"
        for selector, kind in rules
    )


def stylesheet() -> str:
    """The whole app's stylesheet, with paths to the bundled arrow images filled in."""
    return STYLESHEET + _spin_arrows()


def apply_theme(app: QApplication) -> None:
    """Fusion + a dark palette + the stylesheet: the same look on every OS and platform plugin."""
    app.setStyle("Fusion")
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Window, QColor(BG))
    palette.setColor(QPalette.ColorRole.Base, QColor(CARD))
    palette.setColor(QPalette.ColorRole.AlternateBase, QColor(CARD_HI))
    palette.setColor(QPalette.ColorRole.Text, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.WindowText, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Button, QColor(CARD_HI))
    palette.setColor(QPalette.ColorRole.ButtonText, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Highlight, QColor(ACCENT))
    palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#0d0f18"))
    palette.setColor(QPalette.ColorRole.PlaceholderText, QColor(MUTED_TEXT))
    app.setPalette(palette)
    app.setStyleSheet(stylesheet())
