# kokoro-onnx (production TTS) reads its own version and a config file from the package.
from PyInstaller.utils.hooks import collect_data_files, copy_metadata

datas = collect_data_files("kokoro_onnx") + copy_metadata("kokoro_onnx")
hiddenimports = ["espeakng_loader"]
