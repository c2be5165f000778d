# Piper phonemizes through its bundled espeak-ng (espeakbridge) and reads the voice data from
# piper/espeak-ng-data at run time. Training code, the HTTP server's templates and images are
# not needed by the app.
from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files(
    "piper", excludes=["train", "train/**", "templates/**", "img/**", "**/__pycache__/**"]
)
hiddenimports = ["piper.espeakbridge"]
