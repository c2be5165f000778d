"""Nothing clipped (issue 23, item 10): the window fits half a laptop screen, long persona
names and descriptions end in "…" inside their row, reply bubbles stay inside a narrow
column, the Settings "Language model" row keeps its height, and the Models dialog opens
large enough for the rows that arrive after it is shown."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.personas.loader import PersonaLibrary, load_personas
from app.personas.model import Persona
from app.storage.settings import Settings
from app.ui.elided_label import ElidedLabel, fit_lines
from app.ui.models_dialog import ModelsDialog
from app.ui.settings_dialog import SettingsDialog
from app.ui.sidebar import PersonaSidebar
from app.ui.window import MainWindow

HALF_A_LAPTOP = 1366 // 2
LONG = Persona(id="long", name="Professor Bartholomew Featherstonehaugh",
               description="A wandering scholar of forgotten maritime trade routes who "
                           "explains everything twice, with footnotes and <b>asides</b>",
               system_prompt="You are a scholar.")


def test_fit_lines_wraps_then_elides_the_last_line(qapp: QApplication) -> None:
    metrics = QFontMetrics(qapp.font())
    width = metrics.horizontalAdvance("forgotten maritime")
    text = fit_lines(LONG.description, metrics, width, 2)
    lines = text.split("\n")
    assert len(lines) == 2 and lines[1].endswith("…")
    assert all(metrics.horizontalAdvance(line) <= width for line in lines)
    assert fit_lines("Short.", metrics, width, 2) == "Short."
    one = fit_lines(LONG.name, metrics, width, 1)
    assert "\n" not in one and one.endswith("…")


def test_the_window_fits_half_a_laptop_screen(qtbot: QtBot, window: MainWindow) -> None:
    assert window.minimumSizeHint().width() <= HALF_A_LAPTOP
    window.set_hud_visible(True)
    assert window.minimumSizeHint().width() <= HALF_A_LAPTOP + 40


def test_long_names_and_descriptions_stay_in_their_row(qtbot: QtBot) -> None:
    library: PersonaLibrary = load_personas()
    sidebar = PersonaSidebar([LONG, *library.personas])
    qtbot.addWidget(sidebar)
    sidebar.resize(260, 400)
    sidebar.show()
    qtbot.waitExposed(sidebar)
    sidebar.resize(190, 400)  # the window narrowed: rows must follow
    row = sidebar.itemWidget(sidebar.item(0))
    qtbot.waitUntil(lambda: row.geometry().right() <= sidebar.viewport().width(), timeout=2000)
    name, description = row.findChildren(ElidedLabel)
    assert name.text().endswith("…") and "\n" not in name.text()
    lines = description.text().split("\n")
    assert len(lines) == 2 and lines[1].endswith("…")
    assert all(description.fontMetrics().horizontalAdvance(line) <= description.width()
               for line in lines)
    assert "<b>asides</b>" not in row.toolTip()  # shown as written, not as markup
    assert "&lt;b&gt;asides" in row.toolTip()


def test_reply_bubbles_stay_inside_a_narrow_column(qtbot: QtBot, window: MainWindow) -> None:
    transcript = window.transcript
    transcript.show_restored([("Tell me about whales, please, in some detail.",
                               "Whales sing to each other across whole oceans.", False)])
    window.resize(window.minimumSizeHint().width(), 600)
    qtbot.waitUntil(lambda: transcript.viewport().width() < 250, timeout=2000)
    [row] = transcript._rows.values()
    for bubble in (row.user, row.reply):
        qtbot.waitUntil(lambda b=bubble: b.width() <= transcript.viewport().width(),
                        timeout=2000)


def test_settings_language_model_row_is_not_squashed(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), load_devices=False)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.resize(560, 1)  # as short as it goes (a small screen): the rows scroll instead
    qtbot.waitUntil(lambda: dialog.height() <= dialog.minimumSizeHint().height() + 1,
                    timeout=2000)
    assert dialog.height() < 600
    row = dialog.llm_choice
    assert row.height() >= row.sizeHint().height()
    assert dialog.llm_path.height() >= dialog.llm_path.sizeHint().height()
    assert dialog.scroller.verticalScrollBar().maximum() > 0


def test_models_dialog_opens_tall_enough_for_its_rows(qtbot: QtBot) -> None:
    dialog = ModelsDialog(gather_now=False)
    qtbot.addWidget(dialog)
    assert dialog.height() >= 300 and dialog.width() >= 600
