"""The Cubism licence terms, shown once before a Live2D model is first drawn.

Cubism Core is not ours to license: the user installed it with ``live2d-py`` and answers
for its terms, so they are shown with Accept and Decline (Decline is the default button:
Enter or Escape never agrees to a licence) and the answer is kept in the settings.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from app.ui.live2d_runtime import TERMS

TITLE = "Live2D Cubism licence"


def terms_box(parent: QWidget | None) -> tuple[QMessageBox, object]:
    """The box and its Accept button (the answer is Accept when it was clicked)."""
    box = QMessageBox(parent)
    box.setObjectName("live2dTerms")
    box.setIcon(QMessageBox.Icon.Information)
    box.setWindowTitle(TITLE)
    box.setText("Use Live2D models? Their runtime comes with its own licence.")
    box.setInformativeText(TERMS)
    accept = box.addButton("Accept", QMessageBox.ButtonRole.AcceptRole)
    decline = box.addButton("Decline", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(decline)
    box.setEscapeButton(decline)
    return box, accept


def ask_terms(parent: QWidget | None) -> bool:
    """Show the terms and wait for the user's answer; True when accepted."""
    box, accept = terms_box(parent)
    box.exec()
    accepted = box.clickedButton() is accept
    box.deleteLater()
    return accepted
