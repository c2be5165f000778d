"""Text from a persona file or a character card, made safe to show.

A card downloaded from the internet can hold characters a terminal or Qt acts on instead
of showing: escape sequences (ESC, the C1 CSI) that recolour or retitle the terminal
``hanasu personas list`` prints to, and the bidirectional embeddings, overrides and
isolates (U+202A-U+202E, U+2066-U+2069) that make a name read backwards, or the text
beside it read in another order, in the sidebar and the terminal. ``plain_text`` drops
them (and lone surrogates, which cannot even be printed) when a persona is loaded or a
card imported; everything a person can read, in any script, is kept as written. The
marks a right-to-left script needs (U+200E, U+200F, U+061C) are kept: they change no
order outside their own text.
"""

from __future__ import annotations

import re

_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
_DROPPED = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f{_BIDI_CONTROLS}"
                      "\ud800-\udfff]")
"""C0 controls but tab, line feed and carriage return; DEL; C1 controls but NEL; the
bidi embeddings, overrides and isolates; lone surrogates."""
_BREAKS = re.compile("\r\n?|[\x85\u2028\u2029]")
"""Line breaks other than ``\\n`` (CR, CRLF, NEL, the line and paragraph separators)."""


def plain_text(text: str, multiline: bool = False) -> str:
    """``text`` without control characters and bidi overrides.

    One line (a name, a sidebar description): tabs and line breaks become spaces and
    runs of spaces one, ends stripped. ``multiline``: line breaks become ``\\n`` and tabs
    stay; nothing else about the spacing changes."""
    text = _BREAKS.sub("\n", _DROPPED.sub("", text))
    if multiline:
        return text
    return " ".join(text.split())
