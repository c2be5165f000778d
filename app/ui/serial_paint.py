"""Qt paints on the GUI thread alone (``QT_NO_GUI_THREADPOOL``).

Qt's raster engine hands every fill of 96 or more spans (the avatar's backdrop, head and
ring; any large widget) to a private thread pool in pieces and waits for all of them.
Measured here: a 420 px avatar frame made ~1,000 futex calls through that pool and took
1.4 ms of CPU and 3.8 ms of wall time; painted serially, 0.75 ms and 1.9 ms. Worse, on a
machine with more runnable threads than cores a preempted pool thread holds the GUI thread
up: in ``bench soak`` the worst late ticks (100-240 ms) were the GUI thread waiting for a
"Thread (pooled)" that waited as long for a CPU. Qt reads the variable once, when the
pool is first wanted, and only checks that it is set (any value turns the pool off), so
it is set before the application object exists, unless the user set it already.
"""

from __future__ import annotations

import os

VARIABLE = "QT_NO_GUI_THREADPOOL"


def paint_serially() -> None:
    """Call before creating the QApplication (and before anything paints)."""
    os.environ.setdefault(VARIABLE, "1")
