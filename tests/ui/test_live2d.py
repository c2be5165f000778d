"""A persona's Live2D model, with live2d-py found missing (most users' case: it is found
missing at run time, the avatar falls back with one notice, the app never imports it or
OpenGL widgets on its own) and with the real live2d-py (the dev extra installs it): the
loading child survives a damaged model, the licence prompt asks once and its answer is kept,
the editor imports a model folder, the pose maps to Cubism parameters and expressions. The
real library draws on Mesa's software OpenGL under a private Xvfb (``display``)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from app.core.emotion import Emotion
from app.core.events import AssistantState
from app.personas.loader import load_persona_file, load_personas
from app.personas.model import Persona
from app.personas.writer import save_persona
from app.storage.settings import Settings
from app.ui import live2d_host
from app.ui.avatar import AvatarWidget
from app.ui.face_pose import FacePose
from app.ui.live2d_drive import ModelDriver, expression_for
from app.ui.live2d_probe import Live2DProbe
from app.ui.live2d_runtime import Live2DLibrary, Live2DModel, find_live2d
from app.ui.live2d_terms import ask_terms, terms_box
from app.ui.persona_editor import EditorContext, PersonaEditor
from app.ui.window import MainWindow
from tests.personas.test_live2d_model import model_json, write_model
from tests.support import live2d_sample
from tests.support.live_app import Xvfb
from tests.support.system import SETUP_HINT, require_tools

MISSING = 'the optional live2d-py package is not installed (pip install "hanasu[live2d]")'


@pytest.fixture
def absent(monkeypatch: pytest.MonkeyPatch) -> None:
    """live2d-py is not installed here; where it is, hide it the way a missing one fails."""
    if importlib.util.find_spec("live2d") is not None:
        monkeypatch.setitem(sys.modules, "live2d", None)


@pytest.fixture(scope="module")
def _opengl() -> Iterator[str]:
    """An X display for OpenGL (Mesa's llvmpipe): a private Xvfb, or the caller's DISPLAY.
    Only child processes draw on it (the loading child, and ``on_xcb``'s child pytest): the
    suite's own process makes no OpenGL context and never imports live2d-py (see
    ``test_the_suite_process_never_loaded_live2d``)."""
    require_tools("Xvfb")
    xvfb = Xvfb()
    name = xvfb.start()
    yield name
    xvfb.stop()


@pytest.fixture
def display(_opengl: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The same display for the child processes a test starts (the loading child)."""
    monkeypatch.setenv("DISPLAY", _opengl)
    # read by this process only when its Qt started; a child must find OpenGL
    monkeypatch.delenv("QT_QPA_OFFSCREEN_NO_GLX", raising=False)
    return _opengl


def on_xcb(request: pytest.FixtureRequest, display: str) -> bool:
    """Whether this process draws on the X display (Qt's xcb platform). The suite's Qt is
    offscreen, where a QOpenGLWidget has no framebuffer of its own, so there the calling
    test runs again in a child pytest on the Xvfb (the xcb mode of tests/ui/conftest.py),
    which must pass; the caller then returns."""
    if QGuiApplication.platformName() == "xcb":
        return True
    env = {**os.environ, "DISPLAY": display, "HANASU_SCREENSHOT_XCB": "1"}
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", request.node.nodeid],
        cwd=request.config.rootpath, env=env, capture_output=True, text=True, timeout=300,
        check=False)
    assert child.returncode == 0 and "1 passed" in child.stdout, child.stdout[-4000:]
    return False


@pytest.fixture
def live2d_py() -> None:
    """The real live2d-py: installed by the dev extra, so missing is a failure, not a skip."""
    if importlib.util.find_spec("live2d") is None:
        pytest.fail(f'live2d-py is not installed: pip install -e ".[dev]" ({SETUP_HINT})',
                    pytrace=False)


def live2d_persona(folder: Path, model: str = "avatar/hana/live2d/hana.model3.json",
                   **avatar: object) -> Persona:
    persona = Persona.model_validate({
        "id": "hana", "name": "Hana", "system_prompt": "You are Hana.", "order": 0,
        "avatar": {"live2d": {"model": model}, **avatar}})
    save_persona(persona, folder)
    return persona


def open_window(qtbot: QtBot, folder: Path, settings: Settings | None = None) -> MainWindow:
    window = MainWindow(load_personas(folder), settings or Settings(persona_id="hana"),
                        save_settings=lambda _s: None)
    qtbot.addWidget(window)
    return window


def stand_in(monkeypatch: pytest.MonkeyPatch, find: Callable[[], Live2DLibrary | str],
             ask: Callable[[QWidget], bool] | None = None) -> None:
    """The window's stage finds ``find``'s answer instead of importing live2d-py (and
    asks ``ask`` instead of showing the terms)."""
    monkeypatch.setattr(live2d_host, "find_live2d", find)
    if ask is not None:
        monkeypatch.setattr(live2d_host, "ask_terms", ask)


def notices_about_live2d(window: MainWindow) -> list[str]:
    return [n for n in window.notices.messages if "Live2D" in n]


def test_live2d_is_found_missing_with_the_install_command(absent: None) -> None:
    assert find_live2d() == MISSING


def test_the_app_imports_neither_live2d_nor_opengl_widgets() -> None:
    code = ("import sys, app.ui.window, app.ui.persona_editor, app.ui.pet_mode\n"
            "print(sorted(m for m in sys.modules if m.startswith(('live2d', 'app.ui.live2d_view',"
            " 'PySide6.QtOpenGL'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[2], timeout=120)
    assert out.stdout.strip() == "[]"


def test_missing_live2d_falls_back_to_the_face_with_one_notice(
        qtbot: QtBot, tmp_path: Path, absent: None) -> None:
    write_model(tmp_path / "avatar" / "hana" / "live2d")
    live2d_persona(tmp_path)
    window = open_window(qtbot, tmp_path)
    assert window.persona.avatar.live2d is not None
    assert notices_about_live2d(window) == [
        f"Hana's Live2D model is not shown: {MISSING}. The drawn face is shown instead."]
    assert window.live2d.model is None and not window.live2d.views
    assert not window.avatar.covered
    assert window.settings.live2d_terms is None  # nothing to accept without the package
    window.refresh_persona(window.persona)  # shown again: still one notice
    assert len(notices_about_live2d(window)) == 1
    window.shutdown()


def test_a_hostile_model_is_refused_before_anything_loads_it(
        qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_model(tmp_path / "avatar" / "hana" / "live2d", model_json(Moc="../../../x.moc3"))
    live2d_persona(tmp_path)
    found: list[str] = []

    def find() -> str:
        found.append("looked")
        return "-"

    stand_in(monkeypatch, find)
    window = open_window(qtbot, tmp_path)
    assert found == []  # refused on its files: live2d-py is not even looked for
    assert any("points outside the model's folder" in n for n in notices_about_live2d(window))
    window.shutdown()


class StandInModel:
    """Records what the driver sets (a stand-in for a loaded live2d.Model; the method
    names are live2d-py's)."""

    def __init__(self, params: list[str], expressions: list[str]) -> None:
        self.params, self.expressions = params, expressions
        self.values: dict[str, float] = {}
        self.calls: list[str] = []

    def LoadModelJson(self, path: str) -> None:
        raise RuntimeError("corrupt moc3")

    def Resize(self, w: int, h: int) -> None: ...
    def Update(self) -> None: ...
    def Draw(self) -> None: ...

    def GetParamIds(self) -> list[str]:
        return self.params

    def SetParamById(self, id: str, value: float, weight: float = 1.0) -> None:
        self.values[id] = value

    def GetExpressions(self) -> list[str]:
        return self.expressions

    def SetExpression(self, expressionId: str) -> None:
        self.calls.append(expressionId)

    def ResetExpression(self) -> None:
        self.calls.append("reset")

    def SetAutoBlink(self, on: bool) -> None:
        self.calls.append(f"auto blink {on}")


class StandInLibrary:
    """Stands in for an installed live2d-py in the licence-flow tests only; offscreen has
    no OpenGL, so nothing is ever drawn with it."""

    def init(self) -> None: ...
    def glInit(self) -> None: ...
    def clearBuffer(self, r: float, g: float, b: float, a: float) -> None: ...

    def Model(self) -> Live2DModel:
        return StandInModel([], [])


def library() -> Live2DLibrary | str:
    return StandInLibrary()


@pytest.mark.parametrize("accept", [True, False])
def test_the_licence_is_asked_once_after_the_window_is_up_and_kept(
        qtbot: QtBot, tmp_path: Path, accept: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    write_model(tmp_path / "avatar" / "hana" / "live2d")
    live2d_persona(tmp_path)
    asked: list[QWidget] = []

    def ask(parent: QWidget) -> bool:
        asked.append(parent)
        return accept

    stand_in(monkeypatch, library, ask)
    monkeypatch.setattr(live2d_host, "opengl_problem", lambda: "no OpenGL in this test")
    window = open_window(qtbot, tmp_path)
    assert asked == []  # not while the window is being built
    qtbot.waitUntil(lambda: window.settings.live2d_terms is not None)
    assert asked == [window]
    assert window.settings.live2d_terms is accept
    expected = "no OpenGL in this test" if accept else "the Live2D licence terms were declined"
    assert any(expected in n for n in notices_about_live2d(window))
    assert not window.avatar.covered
    window.refresh_persona(window.persona)
    qtbot.wait(50)
    assert asked == [window]  # the answer is kept: never asked twice
    window.shutdown()


def test_a_kept_answer_is_not_asked_again(qtbot: QtBot, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_model(tmp_path / "avatar" / "hana" / "live2d")
    live2d_persona(tmp_path)
    stand_in(monkeypatch, library, lambda _p: pytest.fail("asked"))
    window = open_window(qtbot, tmp_path, Settings(persona_id="hana", live2d_terms=False))
    qtbot.wait(50)
    assert any("declined" in n for n in notices_about_live2d(window))
    window.shutdown()


def test_the_terms_box_names_the_licences_and_declines_by_default(qtbot: QtBot) -> None:
    box, accept = terms_box(None)
    qtbot.addWidget(box)
    text = box.informativeText()
    assert "Live2D Proprietary Software License Agreement" in text
    assert "live2d-proprietary-software-license-agreement" in text
    assert "Hanasu does not include or distribute" in text
    assert box.defaultButton() is box.escapeButton()
    assert box.defaultButton() is not accept
    answers = []
    for label in ("Accept", "Decline"):
        def click(label: str = label) -> None:
            shown = next(w for w in QApplication.topLevelWidgets()
                         if isinstance(w, QMessageBox) and w.isVisible())
            next(b for b in shown.buttons() if b.text() == label).click()
        QTimer.singleShot(50, click)
        answers.append(ask_terms(None))  # the real modal box, answered by a click
    assert answers == [True, False]


def test_the_pose_drives_the_model_parameters_and_expressions() -> None:
    model = StandInModel(["ParamMouthOpenY", "ParamEyeLOpen", "ParamEyeROpen", "ParamAngleY"],
                         ["Happy", "teasing", "f03"])
    driver = ModelDriver(model)
    assert model.calls == ["auto blink False"]  # the avatar times the blinks
    driver.apply(FacePose(AssistantState.SPEAKING, blink=1.0, mouth=0.7, nod=0.5),
                 Emotion.HAPPY)
    assert model.values == {"ParamMouthOpenY": 0.7, "ParamEyeLOpen": 0.0,
                            "ParamEyeROpen": 0.0, "ParamAngleY": -6.0}
    assert model.calls[-1] == "Happy"
    driver.apply(FacePose(AssistantState.SPEAKING, mouth=0.2), Emotion.HAPPY)
    assert model.calls.count("Happy") == 1  # an unchanged feeling sets nothing
    driver.apply(FacePose(AssistantState.SPEAKING), Emotion.SMUG)
    assert model.calls[-1] == "teasing"
    driver.apply(FacePose(AssistantState.THINKING), Emotion.SAD)  # no such expression
    assert model.calls[-1] == "reset"
    assert "ParamAngleZ" not in model.values  # a parameter the model lacks is left alone


def test_expression_names_match_feelings_in_any_case() -> None:
    names = {"thinking": "Thinking", "happy": "HAPPY", "neutral": "Normal"}
    assert expression_for(Emotion.SAD, AssistantState.THINKING, names) == "Thinking"
    assert expression_for(Emotion.HAPPY, AssistantState.SPEAKING, names) == "HAPPY"
    assert expression_for(Emotion.NEUTRAL, AssistantState.IDLE, names) == "Normal"
    assert expression_for(Emotion.ANGRY, AssistantState.SPEAKING, names) is None


def test_the_editor_imports_a_model_folder_into_the_persona(
        qtbot: QtBot, tmp_path: Path) -> None:
    source = tmp_path / "download" / "Hana"
    write_model(source)
    folder = tmp_path / "personas"
    editor = PersonaEditor(None, EditorContext(folder=folder, taken_ids=frozenset()))
    qtbot.addWidget(editor)
    editor.name.setText("Hana")
    assert editor.face_rows.import_avatar(source.parent) is None  # no roles to pick
    assert editor.face_rows.live2d.name.text().startswith("hana.model3.json: 2 expressions")
    editor.save()
    assert editor.saved_path is not None, editor.error.text()
    persona = load_persona_file(editor.saved_path)
    assert persona.avatar.live2d is not None
    assert persona.avatar.live2d.model == "avatar/hana/live2d/hana.model3.json"
    assert (folder / persona.avatar.live2d.model).is_file()


def test_the_editor_refuses_a_broken_model_with_one_line(qtbot: QtBot, tmp_path: Path) -> None:
    source = tmp_path / "Hana"
    write_model(source)
    (source / "hana.moc3").write_bytes(b"not a model")
    editor = PersonaEditor(None, EditorContext(folder=tmp_path / "p", taken_ids=frozenset()))
    qtbot.addWidget(editor)
    editor.face_rows.import_avatar(source)
    assert editor.face_rows.avatar_error.text() == \
        "Not imported: Live2D file hana.moc3 is not a .moc3 model"
    assert editor.face_rows.live2d.live2d_for("x") is None


def _probe(qtbot: QtBot, model: Path) -> str:
    probe = Live2DProbe(model)
    with qtbot.waitSignal(probe.finished, timeout=60_000) as signal:
        probe.start()
    return str(signal.args[0])


def test_the_loading_child_reports_a_missing_live2d(
        qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real child process, where live2d-py cannot be imported (a sitecustomize on the
    child's path hides it the way a missing package fails)."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['live2d'] = None\n")
    monkeypatch.setenv("PYTHONPATH", str(hide))
    problem = _probe(qtbot, write_model(tmp_path / "model"))
    assert problem == f"live2d-py could not load it ({MISSING})"


def test_a_damaged_moc3_ends_the_child_not_the_app(qtbot: QtBot, tmp_path: Path,
                                                   display: str, live2d_py: None) -> None:
    """live2d-py 1.0.0 aborts the process that loads a .moc3 with a valid signature and
    garbage after it; the app only ever sees the child die."""
    problem = _probe(qtbot, write_model(tmp_path))
    assert problem == "live2d-py crashed while loading it (a damaged or unsupported model)"


def test_the_window_survives_a_damaged_model_with_the_real_live2d(
        qtbot: QtBot, tmp_path: Path, request: pytest.FixtureRequest, display: str,
        live2d_py: None) -> None:
    if not on_xcb(request, display):  # the window imports live2d-py: not in the suite's process
        return
    write_model(tmp_path / "avatar" / "hana" / "live2d")
    live2d_persona(tmp_path)
    window = open_window(qtbot, tmp_path, Settings(persona_id="hana", live2d_terms=True))
    probe = window.live2d.probe
    assert probe is not None, window.notices.messages
    qtbot.waitUntil(lambda: probe.problem is not None, timeout=60_000)
    assert notices_about_live2d(window) == [
        "Hana's Live2D model is not shown: live2d-py crashed while loading it (a damaged or "
        "unsupported model). The drawn face is shown instead."]
    assert not window.live2d.views and not window.avatar.covered
    window.shutdown()


def test_the_desktop_pet_hosts_the_model_too(window: MainWindow) -> None:
    assert list(window.live2d.avatars) == [window.avatar]
    window.pet.enter()
    assert window.pet.pet is not None
    assert list(window.live2d.avatars) == [window.avatar, window.pet.pet.avatar]
    window.pet.leave()
    window.pet.enter()  # the same pet again: hosted once
    assert len(window.live2d.avatars) == 2


def test_a_view_that_cannot_draw_says_so_once_and_stops(qtbot: QtBot, tmp_path: Path) -> None:
    """The stand-in's loader refuses the model (where there is no OpenGL for a
    QOpenGLWidget, the view says so): either way one ``failed`` and no frames."""
    from app.personas.live2d_model import Live2DAvatar, check_live2d
    from app.ui.avatar import AvatarWidget
    from app.ui.live2d_view import START_LIMIT_MS, Live2DView

    write_model(tmp_path)
    info = check_live2d(tmp_path, Live2DAvatar(model="hana.model3.json"))
    avatar = AvatarWidget()
    qtbot.addWidget(avatar)
    view = Live2DView(StandInLibrary(), info, avatar, avatar)
    problems: list[str] = []
    view.failed.connect(problems.append)
    avatar.show()
    qtbot.waitUntil(lambda: bool(problems), timeout=START_LIMIT_MS + 2000)
    assert problems[0] in ("no OpenGL context could be made for it",
                           "live2d-py could not load it: corrupt moc3")
    qtbot.wait(100)
    assert len(problems) == 1 and view.frames == 0 and view.driver is None


@pytest.mark.parametrize("answer", [True, False])
def test_settings_can_ask_for_the_licence_again(qtbot: QtBot, answer: bool) -> None:
    from app.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(live2d_terms=answer))
    qtbot.addWidget(dialog)
    assert dialog.collect().live2d_terms is answer  # kept as it was
    dialog.live2d_terms.setCurrentIndex(0)
    assert dialog.live2d_terms.currentText() == "Ask before the first Live2D model is shown"
    assert dialog.collect().live2d_terms is None
    fresh = SettingsDialog(Settings())
    qtbot.addWidget(fresh)
    assert fresh.live2d_terms.count() == 1  # nothing to accept from here: the prompt does


def test_the_installed_live2d_has_the_api_the_stand_ins_mimic(
        request: pytest.FixtureRequest, display: str, live2d_py: None) -> None:
    """The contract the stand-ins above follow, checked against the real package. It runs in
    the xcb child: a ``live2d.Model`` made in the suite's own process, with no OpenGL context
    of its own, crashed the process when it was collected many tests later."""
    if not on_xcb(request, display):
        return
    from app.ui import live2d_runtime

    found = find_live2d()
    assert not isinstance(found, str), found
    for protocol, subject in ((live2d_runtime.Live2DLibrary, found),
                              (live2d_runtime.Live2DModel, found.Model())):
        names = [n for n in vars(protocol) if not n.startswith("_")]
        assert names and all(callable(getattr(subject, n, None)) for n in names), names


# ---- a real model, drawn ------------------------------------------------------------------


@pytest.fixture
def shizuku(tmp_path: Path) -> Path:
    """A persona folder whose persona shows Live2D Inc.'s sample model Shizuku (Cubism 2;
    ``tests/setup.sh`` fetches it, see tests/support/live2d_sample.py). Two expressions are
    named after feelings, as a user would name them, and its idle motions are left out so a
    frame depends only on the pose."""
    if not live2d_sample.MODEL.is_file():
        pytest.fail(f"the Live2D sample model is missing: python -m tests.support.live2d_sample "
                    f"({SETUP_HINT})", pytrace=False)
    target = tmp_path / "avatar" / "hana" / "live2d"
    shutil.copytree(live2d_sample.FOLDER, target, ignore=shutil.ignore_patterns("snd", ".*"))
    settings = target / live2d_sample.MODEL.name
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["expressions"][1]["name"] = "happy"
    data["expressions"][3]["name"] = "sad"
    data["motions"] = {}
    settings.write_text(json.dumps(data, indent=1), encoding="utf-8")
    live2d_persona(tmp_path, model=f"avatar/hana/live2d/{settings.name}")
    return tmp_path


def pixels(view: QOpenGLWidget) -> np.ndarray:
    """The view's framebuffer as it draws now (one frame drawn for it), RGBA."""
    image = view.grabFramebuffer().convertToFormat(QImage.Format.Format_RGBA8888)
    return np.frombuffer(image.constBits(), np.uint8).reshape(
        image.height(), image.width(), 4).copy()


def settled(view: QOpenGLWidget, qtbot: QtBot) -> np.ndarray:
    """The frame once the model's physics has followed a change (hair swings a while)."""
    for _ in range(12):
        pixels(view)
        qtbot.wait(30)
    return pixels(view)


def changed(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels that differ by more than rounding."""
    return int((np.abs(a.astype(int) - b.astype(int)).max(axis=-1) > 24).sum())


def drawn_view(window: MainWindow, avatar: AvatarWidget, qtbot: QtBot) -> QOpenGLWidget:
    qtbot.waitUntil(lambda: avatar in window.live2d.views, timeout=60_000)
    view = window.live2d.views[avatar]
    qtbot.waitUntil(lambda: view.frames > 2 or view.problem is not None, timeout=30_000)
    assert view.problem is None and view.driver is not None, view.problem
    view.driver.model.SetAutoBreath(False)  # type: ignore[attr-defined]  # live2d-py's own
    return view


def shown_shizuku_window(qtbot: QtBot, shizuku: Path) -> MainWindow:
    """The window with the Shizuku persona, its terms accepted, shown on the display."""
    window = open_window(qtbot, shizuku, Settings(persona_id="hana", live2d_terms=True))
    window.resize(420, 720)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_the_loading_child_loads_the_real_model(qtbot: QtBot, display: str, live2d_py: None,
                                                shizuku: Path) -> None:
    assert _probe(qtbot, shizuku / "avatar" / "hana" / "live2d" / "shizuku.model.json") == ""


def test_the_real_model_is_drawn_in_the_window_and_the_pet(
        qtbot: QtBot, request: pytest.FixtureRequest, display: str, live2d_py: None,
        shizuku: Path) -> None:
    if not on_xcb(request, display):
        return
    window = shown_shizuku_window(qtbot, shizuku)
    view = drawn_view(window, window.avatar, qtbot)
    assert window.avatar.covered and notices_about_live2d(window) == []
    assert window.live2d.model is not None and window.live2d.model.expressions[1] == "happy"
    frame = pixels(view)
    opaque = frame[..., 3] > 0
    assert 0.1 < opaque.mean() < 0.95, opaque.mean()  # a figure, not blank, not a fill
    colours = {tuple(c) for c in frame[opaque][::7, :3] // 16}
    assert len(colours) > 150, len(colours)  # a textured figure: skin, hair, eyes, clothes
    if os.environ.get("HANASU_SCREENS"):
        window.grab().save(str(Path(os.environ["HANASU_SCREENS"]) / "live2d-shizuku.png"))

    window.pet.enter()
    assert window.pet.pet is not None
    pet_view = drawn_view(window, window.pet.pet.avatar, qtbot)
    assert window.pet.pet.avatar.covered
    assert (pixels(pet_view)[..., 3] > 0).mean() > 0.05
    window.pet.leave()
    window.shutdown()


def test_the_mouth_and_a_feeling_change_the_drawn_model(
        qtbot: QtBot, request: pytest.FixtureRequest, display: str, live2d_py: None,
        shizuku: Path) -> None:
    if not on_xcb(request, display):
        return
    window = shown_shizuku_window(qtbot, shizuku)
    avatar = window.avatar
    view = drawn_view(window, avatar, qtbot)
    avatar.set_state(AssistantState.SPEAKING)
    avatar.freeze(1.0, mouth=0.0)
    closed = settled(view, qtbot)
    again = settled(view, qtbot)
    avatar.freeze(1.0, mouth=1.0)
    opened = settled(view, qtbot)
    noise, mouth = changed(closed, again), changed(closed, opened)
    print(f"mouth: {mouth} pixels changed, same pose: {noise}")
    assert mouth > 40 and mouth > 4 * noise, (mouth, noise)
    avatar.show_expression(Emotion.HAPPY)
    happy = settled(view, qtbot)
    assert view.driver is not None and view.driver.expression == "happy"
    assert changed(opened, happy) > 4 * max(noise, 10), (changed(opened, happy), noise)
    window.shutdown()


def test_the_suite_process_never_loaded_live2d() -> None:
    """Run last in this file. A ``live2d.Model`` and Mesa's OpenGL in the suite's own
    process once crashed it (a segfault many test files later), so everything here that
    loads live2d-py or draws runs in a child; the xcb child itself may load it."""
    if QGuiApplication.platformName() == "xcb":
        return
    assert sys.modules.get("live2d") is None
