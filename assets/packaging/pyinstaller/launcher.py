"""Entry script of the frozen app (PyInstaller runs this as ``__main__``).

It only hands over to ``app.__main__.main`` so the package is imported as a package, the same
way ``python -m app`` and the ``hanasu`` console script import it.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from app.__main__ import main

    sys.exit(main())
