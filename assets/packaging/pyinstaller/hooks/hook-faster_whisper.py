# faster-whisper reads its Silero VAD model (assets/silero_vad_v6.onnx) from the package folder;
# Hanasu's VAD uses that same file. Data files are invisible to import analysis.
from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files("faster_whisper")
