"""Python's full (generation 2) garbage collection, kept short for an evening of talk.

After start-up the process holds some 60,000 tracked objects (Qt wrappers, imported
modules, engine objects) that live until exit. Every full collection walks all of them
again: 85 ms measured on the shared 2-core machine, on whichever thread triggered it, while
holding the GIL, so the GUI thread stalls that long in the middle of a turn. ``gc.freeze``
moves them to a permanent generation the collector never scans; later full collections
only walk what the conversation created since.

It is called once the engines are ready, without a ``gc.collect()`` first (that alone
would stall the GUI thread for the same 85 ms): the few cycles that were garbage at that
moment stay in memory, a one-off of start-up's size, never growing.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)


def freeze_startup_objects() -> int:
    """Exclude every object tracked now from later collections; how many are frozen."""
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.debug("gc: %d start-up objects frozen out of later collections", frozen)
    return frozen
