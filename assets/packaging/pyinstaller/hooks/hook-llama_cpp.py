# llama-cpp-python loads libllama/libggml* with ctypes from llama_cpp/lib at import time;
# PyInstaller's import analysis cannot see ctypes loads, so collect the folder explicitly
# (a CUDA build adds libggml-cuda there too). Without it the frozen app fails with
# "Shared library with base name 'llama' not found".
from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("llama_cpp")
# Jinja2 renders the GGUF's chat template.
hiddenimports = ["jinja2", "llama_cpp.llama_chat_format"]
