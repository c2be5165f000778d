"""Command-line entry points: ``run`` (headless, file in / file out), ``bench``, ``models``."""
