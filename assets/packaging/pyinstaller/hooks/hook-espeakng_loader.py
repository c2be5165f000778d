# espeakng-loader (used by kokoro-onnx's phonemizer) ships libespeak-ng and its espeak-ng-data
# beside its __init__ and finds both through __file__: take everything.
from PyInstaller.utils.hooks import collect_all

datas, binaries, hiddenimports = collect_all("espeakng_loader")
