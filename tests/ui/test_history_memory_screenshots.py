"""Screenshots of the History dialog and the memory page, for review (tests/ui/screenshots)."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from app.storage.database import open_database
from app.storage.history import Exchange, HistoryStore
from app.storage.keeper import Keeper
from app.ui.history_dialog import HistoryDialog
from app.ui.memory_dialog import MemoryDialog
from app.ui.theme import apply_theme

SHOTS = Path(__file__).parent / "screenshots"

TALKS = [
    [("Hi Hana! I just got back from Kyoto.",
      "Welcome back! Kyoto in autumn must have been beautiful. Did you see the maple leaves?"),
     ("Yes, at Tofuku-ji. My sister Mei came too.",
      "How lovely that you went together. Tofuku-ji is famous for its bridge over the maples.")],
    [("Can we practise some Spanish today?",
      "¡Claro que sí! Let's start simple: how would you say 'I like rainy days'?"),
     ("Me gustan los días de lluvia.", "¡Perfecto! Your pronunciation is getting better.")],
    [("Tell me a short story about a lighthouse keeper.",
      "Once, on a rocky island, there lived a keeper who talked to the gulls every evening.")],
]


def _fill(db: Path) -> Keeper:
    keeper = Keeper(open_database(db))
    history = HistoryStore(keeper.db)
    now = time.time()
    for n, talk in enumerate(TALKS):
        for i, (user, heard) in enumerate(talk):
            history.add_exchange("hana", f"c{n}", Exchange(
                user, heard, interrupted=(n == 2), committed_at=now - 86_400 * n + i * 60))
    for fact in ["My sister is called Mei", "I'm learning Spanish",
                 "I went to Kyoto in November and loved Tofuku-ji",
                 "My cat is named Biscuit", "I prefer short answers in the morning"]:
        keeper.memories.add("hana", fact)
    return keeper


def test_screenshot_history_and_memory_page(qtbot: QtBot, qapp: object, tmp_path: Path) -> None:
    apply_theme(qapp)  # type: ignore[arg-type]
    SHOTS.mkdir(exist_ok=True)
    keeper = _fill(tmp_path / "hanasu.db")
    platform = QGuiApplication.platformName()

    history = HistoryDialog(keeper.history, {"hana": "Hana"}, "c0")
    qtbot.addWidget(history)
    history.show()
    qtbot.waitExposed(history)
    history.list.setCurrentRow(0)
    qtbot.wait(50)
    assert history.list.count() == 3
    assert "Kyoto" in history.preview.toPlainText()
    assert not history.open_button.isEnabled()  # it is the one open now
    path = SHOTS / f"history-dialog-{platform}.png"
    assert history.grab().toImage().save(str(path))
    assert path.stat().st_size > 10_000

    memories = MemoryDialog(keeper.memories, "hana", "Hana")
    qtbot.addWidget(memories)
    memories.show()
    qtbot.waitExposed(memories)
    memories.new_text.setText("My birthday is on the 3rd of May")
    qtbot.wait(50)
    assert len(memories.texts()) == 5
    path = SHOTS / f"memory-page-{platform}.png"
    assert memories.grab().toImage().save(str(path))
    assert path.stat().st_size > 10_000
    keeper.close()
