"""Checksummed files in simt's disk cache for simt's own native helpers (the GPU launch
trampoline's machine code, the CPU team's object code): the payload's SHA-256, then the
payload, written to a temporary name and renamed into place, so that a reader sees a whole
file or none, and a damaged one is never used. Kernels have their own entries
(runtime/cache.py), which also record what they depend on."""
import hashlib
import os

from .config import config


def read(path):
    """The payload kept at ``path``; None when there is none, it is damaged, or the cache
    is off."""
    if not config.cache:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    payload = data[32:]
    return payload if payload and hashlib.sha256(payload).digest() == data[:32] else None


def write(path, payload):
    """Keep ``payload`` at ``path`` (nothing when the cache is off or its folder is
    read-only: it is made again next time)."""
    if not config.cache:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{os.getpid()}.part"
        with open(partial, "wb") as f:
            f.write(hashlib.sha256(payload).digest() + payload)
        os.replace(partial, path)
    except OSError:
        pass
