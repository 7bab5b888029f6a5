"""Data-only message format between the judge and the sandboxed worker.

A frame is ``MAGIC | u32 header length | u64 blob length | header JSON | blob``.
The header is JSON (names, scalars, devices, dtypes, nesting); every tensor lives in the blob,
which is a safetensors file, and the header refers to it by key. Nothing is pickled or
evaluated.

This module is imported by the judge (as ``autograder.sandboxed.wire``) and by the worker inside the
sandbox (as ``wire``), so it imports only the standard library, torch and safetensors.
"""

import json
import struct

import torch
from safetensors.torch import load as st_load

MAGIC = b"AGW1"
HEAD = struct.Struct("<4sIQ")
MAX_HEADER = 1 << 20  # 1 MiB of JSON
MAX_BLOB = 256 << 20  # 256 MiB of tensors
MAX_DEPTH = 8
MAX_ITEMS = 10_000
MAX_STR = 1 << 20  # a string (e.g. a solution cell) longer than this is refused, never cut

DTYPES = {
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
}

DTYPE_NAMES = {str(d).removeprefix("torch."): d for d in DTYPES}


def cuda_ok():
    """Only the judge asks (a zygote must not touch CUDA before forking)."""
    return torch.cuda.is_available()


class WireError(Exception):
    """A frame or value that does not follow the format."""


def to_plain(value, tensors):
    """Python value -> JSON-able tree; tensors are moved (detached, on CPU) into ``tensors``."""
    if value is None or isinstance(value, bool | str):
        if isinstance(value, str) and len(value) > MAX_STR:
            raise WireError(f"string of {len(value)} characters (at most {MAX_STR})")
        return value
    if isinstance(value, int):
        return {"i": str(int(value))}
    if isinstance(value, float):
        return {"f": float(value).hex()}
    if isinstance(value, torch.device):
        return {"D": value.type}
    if isinstance(value, torch.dtype) and value in DTYPES:
        return {"T": str(value).removeprefix("torch.")}
    if isinstance(value, torch.Tensor):
        if value.device.type not in ("cpu", "cuda"):
            raise WireError(f"tensor on device {value.device.type!r} (only cpu and cuda travel)")
        key = f"t{len(tensors)}"
        t = torch.Tensor(value.detach()).to("cpu") if type(value) is not torch.Tensor else value
        node = {"t": key, "dev": value.device.type}
        order = dim_order(t)
        if order != list(range(t.dim())):  # a transposed view arrives as one (see from_plain)
            t, node["p"] = t.permute(order), order
        tensors[key] = t.detach().to("cpu").contiguous().clone()
        return node
    if isinstance(value, list | tuple):
        return {"l" if isinstance(value, list) else "u": [to_plain(v, tensors) for v in value]}
    if isinstance(value, dict):
        return {"d": [[str(k), to_plain(v, tensors)] for k, v in value.items()]}
    raise WireError(f"unsupported type {type(value).__name__}")


def dim_order(t):
    """The dimensions of ``t`` from outermost to innermost in memory (largest stride first):
    ``list(range(t.dim()))`` for a contiguous tensor, [1, 0] for a transposed matrix."""
    return sorted(range(t.dim()), key=lambda i: (-t.stride(i), i))


def inverse_order(order, ndim):
    """The permutation undoing ``t.permute(order)`` (the header's "p"); WireError unless
    ``order`` is a permutation of range(ndim)."""
    if not isinstance(order, list) or sorted(o for o in order if type(o) is int) != list(
        range(ndim)
    ):
        raise WireError("malformed dimension order")
    inverse = [0] * ndim
    for i, o in enumerate(order):
        inverse[o] = i
    return inverse


def from_plain(node, tensors, device=None, depth=0, count=None):
    """Inverse of :func:`to_plain` with strict checks. ``device`` overrides tensor placement."""
    count = count if count is not None else [0]
    count[0] += 1
    if depth > MAX_DEPTH or count[0] > MAX_ITEMS:
        raise WireError("value nested too deeply or too large")
    if node is None or isinstance(node, bool):
        return node
    if isinstance(node, str):
        if len(node) > MAX_STR:
            raise WireError("string too long")
        return node
    if not isinstance(node, dict) or len(node) not in (1, 2, 3):
        raise WireError("malformed value")
    if "i" in node and len(node) == 1:
        s = node["i"]
        if not isinstance(s, str) or len(s) > 40:
            raise WireError("malformed int")
        return int(s)
    if "f" in node and len(node) == 1:
        s = node["f"]
        if not isinstance(s, str) or len(s) > 40:
            raise WireError("malformed float")
        try:
            return float.fromhex(s) if s not in ("inf", "-inf", "nan") else float(s)
        except ValueError as e:
            raise WireError("malformed float") from e
    if "D" in node and len(node) == 1:
        dev = node["D"]
        if dev not in ("cpu", "cuda"):
            raise WireError("unknown device")
        return torch.device(device if device is not None else dev)
    if "T" in node and len(node) == 1:
        dtype = DTYPE_NAMES.get(node["T"]) if isinstance(node["T"], str) else None
        if dtype is None:
            raise WireError("unknown dtype")
        return dtype
    if "t" in node:
        key, dev = node["t"], node.get("dev", "cpu")
        if not isinstance(key, str) or key not in tensors or not isinstance(dev, str):
            raise WireError("unknown tensor key")
        t = tensors[key]
        if type(t) is not torch.Tensor or t.dtype not in DTYPES:
            raise WireError("unsupported tensor dtype")
        if device is None and (dev not in ("cpu", "cuda") or (dev == "cuda" and not cuda_ok())):
            raise WireError(f"unexpected tensor device {dev!r}")
        target = device if device is not None else dev
        t = t.to(target) if str(target) != "cpu" else t
        return t if "p" not in node else t.permute(inverse_order(node["p"], t.dim()))
    if len(node) == 3:
        raise WireError("malformed value")
    for tag in ("l", "u"):
        if tag in node and len(node) == 1:
            items = node[tag]
            if not isinstance(items, list):
                raise WireError("malformed list")
            out = [from_plain(v, tensors, device, depth + 1, count) for v in items]
            return out if tag == "l" else tuple(out)
    if "d" in node and len(node) == 1:
        items = node["d"]
        if not isinstance(items, list):
            raise WireError("malformed dict")
        out = {}
        for kv in items:
            if not (isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str)):
                raise WireError("malformed dict item")
            out[kv[0]] = from_plain(kv[1], tensors, device, depth + 1, count)
        return out
    raise WireError("malformed value")


def encode(header, values=None):
    """header: dict of JSON scalars; values: dict name -> python value (may hold tensors)."""
    return frame(*encode_parts(header, values))


def encode_parts(header, values=None):
    """(header JSON bytes, safetensors blob) of one frame; tensor ``t<i>`` of the blob is the
    i-th tensor of ``values`` in the order :func:`tensor_paths` lists them."""
    tensors = {}
    body = dict(header)
    if values:
        body["values"] = {k: to_plain(v, tensors) for k, v in values.items()}
    head = json.dumps(body, allow_nan=False).encode()
    return head, safetensors_bytes(tensors) if tensors else b""


def safetensors_bytes(tensors):
    """{key: contiguous CPU tensor} as a safetensors file (8-byte header length, JSON header
    padded to 8 bytes, the tensors' bytes back to back), as safetensors.torch.save writes it
    but without its per-call checks for shared or strided storage, which a frame's own
    contiguous copies never need (a quarter of the time for a few small tensors)."""
    meta, parts, offset = {}, [], 0
    for key, t in tensors.items():
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        meta[key] = {
            "dtype": SAFETENSORS_NAMES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        parts.append(data)
        offset += len(data)
    head = json.dumps(meta, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + b"".join(parts)


def frame(head, blob):
    return HEAD.pack(MAGIC, len(head), len(blob)) + head + blob


def tensor_paths(value, path=()):
    """Paths (tuples of keys and indices) of the tensors in ``value``, in blob order."""
    if isinstance(value, torch.Tensor):
        return [path]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in tensor_paths(v, (*path, i))]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in tensor_paths(v, (*path, str(k)))]
    return []


def blob_index(blob):
    """{tensor key: (dtype name, shape, start, end)} of a safetensors blob (byte offsets into
    the blob), read without loading any tensor. Raises WireError."""
    try:
        (n,) = struct.unpack("<Q", bytes(blob[:8]))
        meta = json.loads(bytes(blob[8 : 8 + n]))
        base = 8 + n
        out = {}
        for k, v in meta.items():
            if k != "__metadata__":
                start, end = v["data_offsets"]
                out[k] = (v["dtype"], list(v["shape"]), base + start, base + end)
        return out
    except Exception as e:
        raise WireError("tensor blob is not valid safetensors") from e


SAFETENSORS_DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
SAFETENSORS_NAMES = {dtype: name for name, dtype in SAFETENSORS_DTYPES.items()}


def load_views(buffer):
    """{key: tensor} whose storage IS ``buffer`` (a writable mmap shared with the judge): an
    in-place change to an input tensor changes the judge's copy of the bytes too."""
    out = {}
    for key, (dtype, shape, start, end) in blob_index(buffer).items():
        dt = SAFETENSORS_DTYPES.get(dtype)
        if dt is None or end < start or end > len(buffer):
            raise WireError("tensor blob is not valid safetensors")
        size = torch.empty((), dtype=dt).element_size()
        count = (end - start) // size
        if count == 0:
            out[key] = torch.empty(shape, dtype=dt)
            continue
        flat = torch.frombuffer(buffer, dtype=dt, count=count, offset=start)
        out[key] = flat.view(shape)
    return out


def changed_tensors(before, after):
    """Keys of the tensors whose bytes differ between two copies of the same blob."""
    return [
        key
        for key, (_, _, start, end) in blob_index(before).items()
        if bytes(before[start:end]) != bytes(after[start:end])
    ]


def _reject_constant(name):
    raise WireError(f"invalid JSON constant {name}")


def decode(head_bytes, blob, device=None, shared=False):
    """Parse one frame body -> (header dict, values dict). Raises WireError. ``shared``: the
    blob is a writable buffer shared with the judge, and CPU tensors are views of it."""
    try:
        body = json.loads(head_bytes.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise WireError("header is not valid JSON") from e
    if not isinstance(body, dict):
        raise WireError("header is not an object")
    tensors = {}
    if blob and shared:
        tensors = load_views(blob)
    elif blob:
        try:
            tensors = st_load(bytes(blob))
        except Exception as e:  # safetensors raises its own error types
            raise WireError("tensor blob is not valid safetensors") from e
    raw = body.pop("values", {})
    if not isinstance(raw, dict):
        raise WireError("malformed values")
    count = [0]
    values = {str(k): from_plain(v, tensors, device, 0, count) for k, v in raw.items()}
    return body, values


def is_question(head_bytes):
    """True for a frame a child sends in the middle of a request: a question about a given
    helper (``{"ok": true, "given": name}``, see worker.Child.given), not its reply."""
    try:
        body = json.loads(head_bytes.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(body, dict) and isinstance(body.get("given"), str)


def read_exact(recv, n):
    """Read exactly n bytes with ``recv(k) -> bytes``; b'' at EOF raises EOFError."""
    chunks, got = [], 0
    while got < n:
        chunk = recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(recv, max_blob=MAX_BLOB):
    """Read one raw frame -> (header bytes, blob bytes), enforcing size caps."""
    magic, hlen, blen = HEAD.unpack(read_exact(recv, HEAD.size))
    if magic != MAGIC or hlen > MAX_HEADER or blen > max_blob:
        raise WireError("frame too large or corrupt")
    return read_exact(recv, hlen), read_exact(recv, blen)
