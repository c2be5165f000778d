"""Reads the tensors of a legacy (pre-zip) PyTorch checkpoint into numpy, without torch.

The legacy format is five pickles in a row (magic number, protocol version, system info,
the object, the list of storage keys) followed by each storage's raw bytes: a little-endian
int64 element count, then the elements. Tensors in the object refer to storages by key
(``persistent_load``) and are rebuilt by ``torch._utils._rebuild_tensor_v2``.

The unpickler is restricted: it builds only dictionaries, tensors and storage types, so a
hostile file cannot run code (every other global is refused).
"""

from __future__ import annotations

import collections
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_STORAGE_TYPES: dict[str, np.dtype[Any]] = {
    "FloatStorage": np.dtype("<f4"),
    "DoubleStorage": np.dtype("<f8"),
    "HalfStorage": np.dtype("<f2"),
    "LongStorage": np.dtype("<i8"),
    "IntStorage": np.dtype("<i4"),
    "ShortStorage": np.dtype("<i2"),
    "CharStorage": np.dtype("i1"),
    "ByteStorage": np.dtype("u1"),
    "BoolStorage": np.dtype("?"),
}


class CheckpointError(ValueError):
    """Not a legacy PyTorch checkpoint we can read (one line, names the problem)."""


@dataclass(frozen=True)
class _StorageType:
    name: str


@dataclass
class _Storage:
    dtype: np.dtype[Any]
    size: int
    data: np.ndarray[Any, Any] | None = None


@dataclass(frozen=True)
class _TensorRef:
    storage: _Storage
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]

    def array(self) -> np.ndarray[Any, Any]:
        data = self.storage.data
        if data is None:
            raise CheckpointError("a tensor's storage has no data in the file")
        if not self.shape:
            return np.array(data[self.offset])
        itemsize = data.dtype.itemsize
        view = np.lib.stride_tricks.as_strided(
            data[self.offset:], shape=self.shape, strides=[s * itemsize for s in self.stride])
        return np.array(view)  # a copy that owns its memory


def _rebuild_tensor(storage: _Storage, offset: int, shape: tuple[int, ...],
                    stride: tuple[int, ...], *_: object) -> _TensorRef:
    if not isinstance(storage, _Storage):
        raise CheckpointError("a tensor refers to something that is not a storage")
    return _TensorRef(storage, int(offset), tuple(shape), tuple(stride))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes], storages: dict[str, _Storage]) -> None:
        super().__init__(file)
        self.storages = storages

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if module == "torch" and name in _STORAGE_TYPES:
            return _StorageType(name)
        raise CheckpointError(f"refused to load {module}.{name} from the checkpoint")

    def persistent_load(self, pid: Any) -> _Storage:
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise CheckpointError(f"unknown persistent id {str(pid)[:40]}")
        _, kind, key, _location, size = pid[:5]
        view = pid[5] if len(pid) > 5 else None
        if not isinstance(kind, _StorageType) or view is not None:
            raise CheckpointError("unsupported storage in the checkpoint")
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = _Storage(_STORAGE_TYPES[kind.name], int(size))
        return storage


def _plain(value: Any) -> Any:
    """Tensors as numpy arrays, dictionaries as plain dicts, the rest as it is."""
    if isinstance(value, _TensorRef):
        return value.array()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    return value


class _Restricted(pickle.Unpickler):
    """For the header pickles: plain values only."""

    def find_class(self, module: str, name: str) -> Any:
        raise CheckpointError(f"refused to load {module}.{name} from the checkpoint header")


def load_legacy_checkpoint(path: Path) -> Any:
    """The checkpoint's object, with every tensor as a numpy array."""
    with open(path, "rb") as file:
        try:
            if _Restricted(file).load() != LEGACY_MAGIC:
                raise CheckpointError(f"{path.name} is not a legacy PyTorch checkpoint")
            _Restricted(file).load()  # protocol version
            info = _Restricted(file).load()
            if isinstance(info, dict) and not info.get("little_endian", True):
                raise CheckpointError(f"{path.name} was saved big-endian")
            storages: dict[str, _Storage] = {}
            result = _Unpickler(file, storages).load()
            keys = _Restricted(file).load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
            if isinstance(exc, CheckpointError):
                raise
            raise CheckpointError(f"{path.name} is damaged: {exc}") from exc
        for key in keys:
            storage = storages.get(key)
            count_bytes = file.read(8)
            if storage is None or len(count_bytes) != 8:
                raise CheckpointError(f"{path.name} is damaged: storage {key!r}")
            count = int.from_bytes(count_bytes, "little")
            data = file.read(count * storage.dtype.itemsize)
            if count != storage.size or len(data) != count * storage.dtype.itemsize:
                raise CheckpointError(f"{path.name} is truncated (storage {key!r})")
            storage.data = np.frombuffer(data, dtype=storage.dtype)
    return _plain(result)
