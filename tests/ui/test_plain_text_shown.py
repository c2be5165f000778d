"""A card's name and description, notices and confirmations are shown as text, never as Qt
rich text: a card whose name or description holds ``<img src="/a/local/file.png">`` shows
those characters, not the file."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox
from pytestqt.qtbot import QtBot

from app.ui.plain import plain_tooltip
from app.ui.window import MainWindow

IMG = '<img src="/etc/hanasu-test.png">'
NAME = f"{IMG}Eve"
DESCRIPTION = f"{IMG}<b>A bold</b> & dangerous <a href='x'>card</a>"


def _card(tmp_path: Path) -> Path:
    card = {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": NAME, "description": DESCRIPTION, "first_mes": "Hello."}}
    path = tmp_path / "eve.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


def _answer_next_box(button: QMessageBox.StandardButton) -> list[tuple[Qt.TextFormat, str]]:
    """Answer the next modal message box with ``button``; what it showed, and how."""
    seen: list[tuple[Qt.TextFormat, str]] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, answer)
            return
        seen.append((box.textFormat(), box.text()))
        box.button(button).click()

    QTimer.singleShot(0, answer)
    return seen


def _rendered(rich: str) -> str:
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


def _rich_labels_with(window: MainWindow, text: str) -> list[str]:
    """Labels anywhere in the window showing ``text`` in a format that may be rich."""
    return [label.text() for label in window.findChildren(QLabel)
            if text in label.text() and label.textFormat() != Qt.TextFormat.PlainText]


def test_a_hostile_cards_name_and_description_are_shown_as_written(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    actions = window.persona_actions
    persona = actions.import_card_file(_card(tmp_path))
    assert persona is not None and persona.name == NAME
    window.sidebar.select(persona.id)
    assert window.title.text() == NAME
    row = window.sidebar.itemWidget(window.sidebar.currentItem())
    assert row is not None
    descriptions = [label for label in row.findChildren(QLabel)  # elided to fit: full_text
                    if IMG in getattr(label, "full_text", label.text())]
    assert descriptions and all(label.textFormat() == Qt.TextFormat.PlainText
                                for label in descriptions)
    tooltip = _rendered(row.toolTip()).splitlines()  # the tooltip shows the tags as written
    assert tooltip[:2] == [NAME, DESCRIPTION]
    assert actions.export_card(persona, tmp_path / "out.png")  # a notice with its name
    assert any(NAME in message for message in window.notices.messages)
    assert _rich_labels_with(window, IMG) == []


def test_notices_from_servers_and_files_are_plain(window: MainWindow) -> None:
    window.add_notice(f"The server said: {IMG} <i>sorry</i>")
    assert window.notices.messages == [f"The server said: {IMG} <i>sorry</i>"]
    assert _rich_labels_with(window, IMG) == []


def test_confirmations_show_a_cards_name_as_text(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    actions = window.persona_actions
    persona = actions.import_card_file(_card(tmp_path))
    assert persona is not None
    actions.interactive = True
    seen = _answer_next_box(QMessageBox.StandardButton.No)
    assert actions.delete(persona) is False  # declined: kept
    assert seen == [(Qt.TextFormat.PlainText, seen[0][1])] and NAME in seen[0][1]
    assert persona.id in [p.id for p in window.sidebar.personas]
    seen = _answer_next_box(QMessageBox.StandardButton.Yes)
    assert actions.delete(persona) is True
    assert seen[0][0] == Qt.TextFormat.PlainText
    assert persona.id not in [p.id for p in window.sidebar.personas]


def test_a_plain_tooltip_renders_its_text_literally() -> None:
    text = "a < b & <b>c</b>\nsecond line"
    assert _rendered(plain_tooltip(text)) == text
    assert plain_tooltip("") == ""

