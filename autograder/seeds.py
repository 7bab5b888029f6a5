"""The secret per-run seed and the seeds derived from it (no torch: the engine imports this).

The run seed never reaches a worker: checks draw concrete inputs from generators seeded with
``derive_seed(run_seed, ...)``, and only those inputs are sent.
"""

import hashlib
import os
import secrets


def new_run_seed():
    return secrets.randbits(63) ^ int.from_bytes(os.urandom(8), "little") >> 1


def derive_seed(run_seed, *parts):
    h = hashlib.sha256(str(run_seed).encode())
    for p in parts:
        h.update(b"\0" + str(p).encode())
    return int.from_bytes(h.digest()[:8], "little") >> 1
