"""Benchmarks and their tooling (speech-set makers, the GGUF writer, the virtual sound card).

Not part of the product: the wheel and the PyInstaller bundle leave this package out, and
``app`` never imports it at module level. ``hanasu bench`` finds it at call time
(``app/__main__.py``) when run from a source checkout after ``bash tests/setup.sh``.
"""
