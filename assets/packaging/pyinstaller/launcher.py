"""Entry script of the frozen app (PyInstaller runs this as ``__main__``).

It only hands over to ``app.__main__.main`` so the package is imported as a package, the same
way ``python -m app`` and the ``hanasu`` console script import it.

Library telemetry is switched off first (app/privacy.py), before ``freeze_support`` can run a
worker process and before anything imports onnxruntime or huggingface_hub; the environment
it sets is inherited by every child process.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    from app.privacy import disable_telemetry, downloads_requested

    disable_telemetry(allow_downloads=downloads_requested(sys.argv[1:]))
    multiprocessing.freeze_support()
    from app.__main__ import main

    sys.exit(main())
