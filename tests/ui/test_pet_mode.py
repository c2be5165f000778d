"""Desktop-pet mode: only the character, frameless and on top, a second view over the same
window and pipeline; its gestures, its menu, and its place kept across a restart."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QSystemTrayIcon
from pytestqt.qtbot import QtBot

from app.core.events import AssistantState
from app.core.pipeline import VoicePipeline
from app.personas.loader import PersonaLibrary
from app.storage.settings import PET_SIZE_MAX, PET_SIZE_MIN, Settings
from app.ui.pet_window import PetWindow, wheel_size
from app.ui.window import MainWindow
from tests.ui.conftest import REPLY, Speaker, feed, utterance


def _pet(window: MainWindow) -> PetWindow:
    assert window.pet.pet is not None
    return window.pet.pet


def _wheel(pet: PetWindow, notches: float) -> None:
    centre = QPointF(pet.width() / 2, pet.height() / 2)
    event = QWheelEvent(centre, pet.mapToGlobal(centre), QPoint(),
                        QPoint(0, round(notches * 120)), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(pet, event)


def _mouse(pet: PetWindow, kind: QEvent.Type, at: QPointF,
           buttons: Qt.MouseButton) -> None:
    button = Qt.MouseButton.LeftButton if kind != QEvent.Type.MouseMove else \
        Qt.MouseButton.NoButton
    event = QMouseEvent(kind, at, pet.mapToGlobal(at), button, buttons,
                        Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(pet, event)


def test_the_header_button_turns_the_window_into_the_pet(
        qtbot: QtBot, window: MainWindow, saved: list[Settings]) -> None:
    assert window.pet.action.shortcut().toString() == "Ctrl+D"
    view = next(a for a in window.menuBar().actions() if a.text() == "&View").menu()
    assert window.pet.action in view.actions()  # type: ignore[union-attr]
    window.pet_button.click()
    pet = _pet(window)
    qtbot.waitExposed(pet)
    assert window.pet.active and window.pet.action.isChecked()
    assert not window.isVisible()
    flags = pet.windowFlags()
    for flag in (Qt.WindowType.FramelessWindowHint, Qt.WindowType.WindowStaysOnTopHint,
                 Qt.WindowType.Tool):
        assert flags & flag, flag
    assert not flags & Qt.WindowType.WindowTransparentForInput
    assert pet.testAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
    assert pet.avatar.avatar_style == window.avatar.avatar_style
    assert pet.avatar.animating and not window.avatar.animating  # nobody sees the window's
    assert window.persona.name in window.pet.describe()
    corner = pet.grab().toImage().pixelColor(2, pet.height() - 2)
    assert corner.alpha() == 0  # no card behind the character
    qtbot.waitUntil(lambda: bool(saved) and saved[-1].pet_mode, timeout=5_000)


def test_the_pet_follows_the_windows_state(window: MainWindow) -> None:
    window.pet.enter()
    pet = _pet(window)
    window.set_device_status(False, "Microphone unplugged")
    assert pet.avatar.state is AssistantState.ERROR
    assert pet.avatar.message == window.avatar.message
    window.set_device_status(True, "Audio is back")
    assert pet.avatar.state is AssistantState.IDLE


def test_the_bubble_shows_the_sentence_being_said(qtbot: QtBot, window: MainWindow) -> None:
    window.pet.enter()
    pet, bridge = _pet(window), window.bridge
    first, second = "Nice to meet you, I am Hana.", "I love long walks by the sea."
    bridge.turn_confirmed.emit(7)
    bridge.chunk_audio.emit(7, 0, first, 1.0)
    bridge.chunk_audio.emit(7, 1, second, 2.0)
    assert pet.bubble.text == ""  # made, not yet heard
    bridge.playback_started.emit(7, 10.0)
    bridge.playback_level.emit(0.1, 10.5)
    assert pet.bubble.text == first and pet.bubble.shown_text == first
    bridge.playback_level.emit(0.1, 11.5)
    assert pet.bubble.text == second
    window.pet._linger.setInterval(50)
    bridge.playback_ended.emit(7, f"{first} {second}", False)
    assert pet.bubble.text == second  # it lingers a moment
    qtbot.waitUntil(lambda: pet.bubble.text == "", timeout=2_000)


def test_a_long_sentence_is_cut_to_the_bubble(window: MainWindow) -> None:
    window.pet.enter()
    bubble = _pet(window).bubble
    long = " ".join(["a rather long sentence that goes on"] * 20)
    bubble.set_text(long)
    assert bubble.text == long
    assert bubble.shown_text.endswith("…") and len(bubble.shown_text) < len(long)


def test_the_pet_keeps_listening_and_answering(qtbot: QtBot, window: MainWindow,
                                               pipeline: VoicePipeline) -> None:
    window.pet.enter()
    pet = _pet(window)
    speaker = Speaker(pipeline, speed=1.0)
    try:
        feed(pipeline, *utterance())
        qtbot.waitUntil(lambda: pet.bubble.text != "", timeout=15_000)
        assert pet.bubble.text in REPLY
        qtbot.waitUntil(lambda: pet.avatar.state is AssistantState.SPEAKING, timeout=5_000)
        qtbot.waitUntil(lambda: pet.avatar.mouth > 0.2, timeout=3_000)
        with qtbot.waitSignal(window.bridge.playback_ended, timeout=15_000):
            pass
    finally:
        speaker.stop()
    assert window.pet.active and not window.isVisible()


def test_the_wheel_resizes_within_bounds_feet_in_place(
        qtbot: QtBot, window: MainWindow, saved: list[Settings]) -> None:
    window.pet.enter()
    pet = _pet(window)
    start = pet.character_size
    feet = (pet.geometry().center().x(), pet.geometry().bottom())
    _wheel(pet, 1)
    assert pet.character_size == wheel_size(start, 1) > start
    assert abs(pet.geometry().center().x() - feet[0]) <= 1
    assert pet.geometry().bottom() == feet[1]
    assert pet.avatar.width() == pet.character_size
    _wheel(pet, 0.5)  # half a notch (a touchpad): nothing yet
    assert pet.character_size == wheel_size(start, 1)
    _wheel(pet, 0.5)
    assert pet.character_size == wheel_size(start, 2)
    for _ in range(30):
        _wheel(pet, 1)
    assert pet.character_size == PET_SIZE_MAX
    for _ in range(60):
        _wheel(pet, -1)
    assert pet.character_size == PET_SIZE_MIN
    qtbot.waitUntil(lambda: saved[-1].pet_size == PET_SIZE_MIN, timeout=5_000)


def test_dragging_moves_the_pet(qtbot: QtBot, window: MainWindow,
                                saved: list[Settings]) -> None:
    window.pet.enter()
    pet = _pet(window)
    qtbot.waitExposed(pet)
    pet.move(50, 40)
    at = QPointF(pet.width() / 2, pet.height() - 20)
    _mouse(pet, QEvent.Type.MouseButtonPress, at, Qt.MouseButton.LeftButton)
    _mouse(pet, QEvent.Type.MouseMove, at + QPointF(30, 25), Qt.MouseButton.LeftButton)
    _mouse(pet, QEvent.Type.MouseButtonRelease, at + QPointF(30, 25), Qt.MouseButton.NoButton)
    assert (pet.x(), pet.y()) == (80, 65)
    qtbot.waitUntil(lambda: saved[-1].pet_position == (80, 65), timeout=5_000)


def test_the_menu_has_its_actions_and_they_work(
        qtbot: QtBot, window: MainWindow, pipeline: VoicePipeline,
        library: PersonaLibrary, saved: list[Settings]) -> None:
    window.pet.enter()
    pet = _pet(window)
    menu = window.pet.menu
    assert menu is not None
    texts = [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]
    assert texts == ["Persona", "Mute microphone", "Click-through pet", "Open the full window",
                     "Quit"]
    with qtbot.waitSignal(pet.menu_requested):
        QApplication.sendEvent(pet, _context_menu(pet))
    menu.hide()

    window.mute_action.trigger()  # the same action as the menu's
    assert window.muted
    qtbot.waitUntil(lambda: window.pipeline_state is AssistantState.MUTED, timeout=5_000)
    assert pet.avatar.state is AssistantState.MUTED
    window.mute_action.trigger()
    qtbot.waitUntil(lambda: window.pipeline_state is not AssistantState.MUTED, timeout=5_000)

    menu.refresh_personas()
    names = {a.data(): a for a in menu.persona_actions()}
    assert set(names) == {p.id for p in library.personas}
    assert names[window.persona.id].isChecked()
    kai = library.get("kai")
    names["kai"].trigger()
    qtbot.waitUntil(lambda: pipeline.machine.conversation.system_messages()[0].content
                    == kai.full_system_prompt(), timeout=5_000)
    assert window.persona.id == "kai" and pet.avatar.avatar_style == kai.avatar
    assert window.pet.active  # the switch happened in the pet

    menu.full_window_action.trigger()
    assert window.isVisible() and not pet.isVisible() and not window.pet.active
    assert window.avatar.animating
    qtbot.waitUntil(lambda: not saved[-1].pet_mode, timeout=5_000)


def _context_menu(pet: PetWindow) -> QEvent:
    from PySide6.QtGui import QContextMenuEvent

    at = QPoint(pet.width() // 2, pet.height() - 20)
    return QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, pet.mapToGlobal(at))


def test_showing_the_full_window_any_way_ends_pet_mode(window: MainWindow) -> None:
    window.pet.enter()
    window.show()  # the tray's Show window, a second launch
    assert not window.pet.active and not _pet(window).isVisible()
    assert not window.pet.action.isChecked()
    window.pet.action.trigger()  # Ctrl+D
    assert window.pet.active and not window.isVisible()
    window.pet.action.trigger()
    assert not window.pet.active and window.isVisible()


def test_click_through_sets_the_flag_and_needs_a_tray(qtbot: QtBot, window: MainWindow) -> None:
    action = window.pet.click_through_action
    assert not action.isEnabled()  # no tray offscreen: nothing could turn it off again
    window.pet.enter()
    pet = _pet(window)
    window.pet.set_click_through(True)
    assert pet.windowFlags() & Qt.WindowType.WindowTransparentForInput
    assert pet.isVisible() and action.isChecked()
    assert pet.windowFlags() & Qt.WindowType.FramelessWindowHint
    window.pet.attach_tray(QSystemTrayIcon(window))
    assert action.isEnabled()
    action.trigger()  # the tray's or the View menu's entry
    assert not pet.windowFlags() & Qt.WindowType.WindowTransparentForInput
    assert pet.isVisible()


def test_mode_size_and_place_survive_a_restart(
        qtbot: QtBot, window: MainWindow, library: PersonaLibrary,
        saved: list[Settings]) -> None:
    window.pet.enter()
    pet = _pet(window)
    qtbot.waitExposed(pet)
    pet.move(120, 70)
    _wheel(pet, 2)
    size, place = pet.character_size, (pet.x(), pet.y())
    window.shutdown()  # stores what still waited for its delay
    last = saved[-1]
    assert (last.pet_mode, last.pet_size, last.pet_position) == (True, size, place)

    again: list[Settings] = []
    second = MainWindow(library, last, save_settings=again.append)
    qtbot.addWidget(second)
    second.pet.show_initial()
    try:
        assert second.pet.active and not second.isVisible()
        restored = _pet(second)
        assert restored.isVisible() and restored.character_size == size
        assert (restored.x(), restored.y()) == place
    finally:
        second.shutdown()


def test_a_place_off_every_screen_falls_back_to_a_corner(
        qtbot: QtBot, library: PersonaLibrary) -> None:
    settings = Settings(pet_mode=True, pet_position=(90_000, 90_000))
    window = MainWindow(library, settings)
    qtbot.addWidget(window)
    window.pet.show_initial()
    try:
        pet = _pet(window)
        screen = QApplication.primaryScreen().availableGeometry()
        assert screen.contains(pet.geometry())
    finally:
        window.shutdown()


def test_a_muted_pet_is_dimmed_only_where_it_is_drawn(window: MainWindow) -> None:
    window.pet.enter()
    pet = _pet(window)
    pet.avatar.freeze(1.0)
    size = pet.avatar.width()
    outside = pet.avatar.mapTo(pet, QPoint(2, size - 2))
    cheek = pet.avatar.mapTo(pet, QPoint(size // 2, round(size * 0.62)))

    def pixels() -> tuple[int, int]:
        image = pet.grab().toImage()  # the window's own pixels, alpha included
        return image.pixelColor(outside).alpha(), image.pixelColor(cheek).lightness()

    corner, lit = pixels()
    window.set_muted(True)
    assert pet.avatar.state is AssistantState.MUTED
    muted_corner, dimmed = pixels()
    assert corner == muted_corner == 0  # the desktop around it stays clear
    assert dimmed < lit - 20



def test_quitting_closes_the_pet(window: MainWindow) -> None:
    """Qt 6's quit() closes every window first (a close that is not the window system's);
    a pet that refused would keep the app running after Quit, Ctrl+Q or SIGTERM."""
    window.pet.enter()
    pet = _pet(window)
    assert pet.close()
    assert not pet.isVisible()


def test_ctrl_d_in_the_pet_brings_the_full_window_back(qtbot: QtBot, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.keyClick(window.transcript, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    assert window.pet.active
    pet = _pet(window)
    pet.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is pet, timeout=2_000)
    qtbot.keyClick(pet, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    assert not window.pet.active and window.isVisible()
