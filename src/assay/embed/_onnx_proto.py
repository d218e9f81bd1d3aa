"""A minimal ONNX model writer (protobuf wire format by hand), so a graph can be built without the ``onnx`` package.

Only what :mod:`assay.embed._e5` needs: float32/int64 initializers from numpy arrays, nodes with int, float
and int-list attributes, float32 graph inputs/outputs with symbolic dimensions. Field numbers are those of
``onnx.proto`` (IR version 8, opset 17); onnxruntime parses and checks the result when it loads it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

__all__ = ["GraphBuilder"]

_FLOAT, _INT64 = 1, 7
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(value)


def _bytes(field: int, value: bytes) -> bytes:
    return _key(field, 2) + _varint(len(value)) + value


def _str(field: int, value: str) -> bytes:
    return _bytes(field, value.encode())


def _attribute(name: str, value: int | float | Sequence[int]) -> bytes:
    if isinstance(value, float):
        body = _str(1, name) + _key(2, 5) + struct.pack("<f", value) + _int(20, _ATTR_FLOAT)
    elif isinstance(value, int):
        body = _str(1, name) + _int(3, value) + _int(20, _ATTR_INT)
    else:
        body = _str(1, name) + b"".join(_int(8, int(v)) for v in value) + _int(20, _ATTR_INTS)
    return body


def _value_info(name: str, dims: Sequence[int | str]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in dims)
    tensor_type = _int(1, _FLOAT) + _bytes(2, shape)
    return _str(1, name) + _bytes(2, _bytes(1, tensor_type))


class GraphBuilder:
    """Accumulates nodes and initializers; :meth:`model` returns the serialized ModelProto."""

    def __init__(self) -> None:
        self._nodes: list[bytes] = []
        self._inits: list[bytes] = []
        self._n = 0
        #: initializers whose data stays out of the serialized model: hand them to onnxruntime with
        #: ``SessionOptions.add_external_initializers`` (no copy of the weights in the model's bytes)
        self.external: dict[str, np.ndarray] = {}

    def const(self, name: str, array: np.ndarray, *, external: bool = False) -> str:
        arr = np.ascontiguousarray(array)
        if arr.dtype == np.float32:
            dtype = _FLOAT
        elif arr.dtype == np.int64:
            dtype = _INT64
        else:
            raise TypeError(f"initializer {name}: unsupported dtype {arr.dtype}")
        dims = b"".join(_int(1, d) for d in arr.shape)
        if external:  # TensorProto.external_data {location: name}, data_location EXTERNAL
            self.external[name] = arr
            data = _bytes(13, _str(1, "location") + _str(2, name)) + _int(14, 1)
        else:
            data = _bytes(9, arr.tobytes())
        self._inits.append(dims + _int(2, dtype) + _str(8, name) + data)
        return name

    def op(self, op_type: str, inputs: Sequence[str], **attrs: int | float | Sequence[int]) -> str:
        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        body = b"".join(_str(1, i) for i in inputs) + _str(2, out) + _str(3, out) + _str(4, op_type)
        body += b"".join(_bytes(5, _attribute(k, v)) for k, v in attrs.items())
        self._nodes.append(body)
        return out

    def model(
        self,
        inputs: Sequence[tuple[str, Sequence[int | str]]],
        outputs: Sequence[tuple[str, str, Sequence[int | str]]],
    ) -> bytes:
        """``outputs``: (node output to expose, graph output name, dims); each is renamed by an Identity."""
        for src, name, _ in outputs:
            self._nodes.append(_str(1, src) + _str(2, name) + _str(3, name) + _str(4, "Identity"))
        graph = b"".join(_bytes(1, n) for n in self._nodes) + _str(2, "assay")
        graph += b"".join(_bytes(5, t) for t in self._inits)
        graph += b"".join(_bytes(11, _value_info(n, d)) for n, d in inputs)
        graph += b"".join(_bytes(12, _value_info(n, d)) for _, n, d in outputs)
        opset = _str(1, "") + _int(2, 17)
        return _int(1, 8) + _str(2, "assay") + _bytes(7, graph) + _bytes(8, opset)
