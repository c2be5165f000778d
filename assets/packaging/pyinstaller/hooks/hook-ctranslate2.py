# CTranslate2's extension links libctranslate2 and libgomp from the wheel's ctranslate2.libs
# folder (found by the binary dependency scan); also take any library inside the package itself
# (CUDA builds on Windows ship their DLLs there).
from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("ctranslate2")
