"""Writes a small ONNX model (the protobuf bytes) without the ``onnx`` package.

Only what a graph of a few standard operators with float tensors needs: nodes with integer
attributes, initializers as raw little-endian data, inputs and outputs with symbolic shapes.
Field numbers are those of ``onnx.proto`` (ModelProto, GraphProto, NodeProto,
AttributeProto, TensorProto, ValueInfoProto, TypeProto).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

IR_VERSION = 8
OPSET = 14
FLOAT, INT64 = 1, 7  # TensorProto.DataType
_ATTRIBUTE_INT = 2  # AttributeProto.AttributeType
_ELEMENT = {np.dtype("float32"): FLOAT, np.dtype("int64"): INT64}


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 as two's complement, as protobuf does
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode("utf-8") if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


@dataclass(frozen=True)
class Node:
    op_type: str
    inputs: Sequence[str]
    outputs: Sequence[str]
    ints: tuple[tuple[str, int], ...] = ()

    def encode(self) -> bytes:
        out = b"".join(_bytes(1, name) for name in self.inputs)
        out += b"".join(_bytes(2, name) for name in self.outputs)
        out += _bytes(4, self.op_type)
        for name, value in self.ints:
            out += _bytes(5, _bytes(1, name) + _int(3, value) + _int(20, _ATTRIBUTE_INT))
        return out


def _tensor(name: str, array: np.ndarray) -> bytes:
    array = np.ascontiguousarray(array)
    kind = _ELEMENT[array.dtype]
    out = b"".join(_int(1, size) for size in array.shape)
    raw = array.astype(array.dtype.newbyteorder("<")).tobytes()  # ONNX's raw data order
    return out + _int(2, kind) + _bytes(8, name) + _bytes(9, raw)


def _value(name: str, dims: Sequence[int | str]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d))
                     for d in dims)
    tensor = _int(1, FLOAT) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor))


def model_bytes(nodes: Sequence[Node], initializers: dict[str, np.ndarray],
                inputs: dict[str, Sequence[int | str]],
                outputs: dict[str, Sequence[int | str]]) -> bytes:
    """A serialized ModelProto of one graph (default domain, opset ``OPSET``)."""
    graph = b"".join(_bytes(1, node.encode()) for node in nodes) + _bytes(2, "graph")
    graph += b"".join(_bytes(5, _tensor(name, value)) for name, value in initializers.items())
    graph += b"".join(_bytes(11, _value(name, dims)) for name, dims in inputs.items())
    graph += b"".join(_bytes(12, _value(name, dims)) for name, dims in outputs.items())
    opset = _bytes(1, "") + _int(2, OPSET)
    return (_int(1, IR_VERSION) + _bytes(2, "hanasu") + _bytes(7, graph)
            + _bytes(8, opset))
