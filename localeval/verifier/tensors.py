"""Read and write the safetensors format with numpy alone.

The format is an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
shape and byte range, then the raw bytes. The verifier ships in it (float16), and the training
script reads the base encoder's float32 file the same way: neither side needs the
`safetensors` package. Every offset is checked before a byte is read: the file is input.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I8": np.int8}
MAX_HEADER_BYTES = 1 << 20


class TensorFileError(ValueError):
    """The bytes are not a safetensors file this reader accepts."""


def read_tensors(data: bytes) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The tensors and the header's `__metadata__` strings of a safetensors file's bytes."""
    if len(data) < 8:
        raise TensorFileError("too short for a safetensors header")
    (size,) = struct.unpack("<Q", data[:8])
    if size > MAX_HEADER_BYTES or 8 + size > len(data):
        raise TensorFileError("header length out of range")
    try:
        header = json.loads(data[8 : 8 + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise TensorFileError(f"header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise TensorFileError("header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    body = memoryview(data)[8 + size :]
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        try:
            dtype = np.dtype(DTYPES[spec["dtype"]])
            shape = tuple(int(n) for n in spec["shape"])
            start, end = (int(n) for n in spec["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise TensorFileError(f"tensor {name!r}: unsupported or malformed entry") from None
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if not 0 <= start <= end <= len(body) or end - start != count * dtype.itemsize:
            raise TensorFileError(f"tensor {name!r}: byte range does not match its shape")
        tensors[name] = np.frombuffer(body[start:end], dtype=dtype).reshape(shape)
    return tensors, {str(k): str(v) for k, v in dict(metadata).items()}


def write_tensors(tensors: Mapping[str, np.ndarray], metadata: Mapping[str, str]) -> bytes:
    """The safetensors bytes of `tensors` (any dtype of DTYPES), names sorted so the bytes are stable."""
    header: dict[str, object] = {"__metadata__": dict(metadata)}
    blobs, offset = [], 0
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        kind = next(k for k, v in DTYPES.items() if array.dtype == v)
        blob = array.tobytes()
        header[name] = {"dtype": kind, "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header, sort_keys=True).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)
    return struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs)
