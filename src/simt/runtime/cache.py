"""The compiled-kernel cache: in memory per kernel, on disk across processes.

The disk key hashes everything that can change the binary: the kernel's
source and that of every device function it reaches, the values of the
module-level constants it reads, argument types, options and the toolchain."""
import hashlib
import inspect
import os
import pickle
import sys
import types as pytypes

import numpy as np

from ..config import config
from ..version import __version__

FORMAT = 1


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _code_names(const)
    return names


def dependency_key(pyfunc, seen=None):
    """A hash of the function's source and of everything it reads from globals."""
    seen = set() if seen is None else seen
    if pyfunc in seen:
        return ""
    seen.add(pyfunc)
    h = hashlib.sha256()
    try:
        h.update(inspect.getsource(pyfunc).encode())
    except (OSError, TypeError):
        h.update(pyfunc.__code__.co_code)
    scope = dict(pyfunc.__globals__)
    if pyfunc.__closure__:
        for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:
                pass
    for name in sorted(_code_names(pyfunc.__code__) | set(pyfunc.__code__.co_freevars)):
        if name in scope:
            h.update(name.encode())
            h.update(_value_key(scope[name], seen).encode())
    return h.hexdigest()


def _value_key(value, seen):
    if hasattr(value, "_simt_device"):
        return "device:" + dependency_key(value.pyfunc, seen)
    if isinstance(value, (bool, int, float, complex, str, np.generic)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple):
        return "(" + ",".join(_value_key(v, seen) for v in value) + ")"
    if isinstance(value, np.ndarray):
        return "ndarray:" + hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest() + \
            str(value.dtype) + str(value.shape)
    if isinstance(value, pytypes.ModuleType):
        return "module:" + value.__name__
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__}:{shape}:{getattr(value, 'dtype', '')}"


_SOURCE_HASH = []
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hashed_sources():
    """The simt sources that make binaries: the IR and its passes, lang, the compiler, the
    back ends, and the modules they share (tests/test_layers.py checks that this covers
    everything the compile hooks import)."""
    paths = [os.path.join(_ROOT, name) for name in ("fault.py", "errors.py", "config.py")]
    for folder in ("ir", "lang", "compiler", "backends"):
        for base, _, files in sorted(os.walk(os.path.join(_ROOT, folder))):
            paths += [os.path.join(base, name) for name in sorted(files) if name.endswith(".py")]
    return paths


def _simt_source_hash():
    """A hash of ``hashed_sources()``, so that a changed simt never loads code an older
    one compiled."""
    if not _SOURCE_HASH:
        h = hashlib.sha256()
        for path in hashed_sources():
            with open(path, "rb") as f:
                h.update(f.read())
        _SOURCE_HASH.append(h.hexdigest()[:16])
    return _SOURCE_HASH[0]


def toolchain_key(target_id):
    import llvmlite
    return (f"{FORMAT}|{__version__}|{_simt_source_hash()}|llvmlite {llvmlite.__version__}|"
            f"{target_id}|{sys.version_info[:2]}")


def disk_key(pyfunc, arg_types, options, target_id):
    parts = [dependency_key(pyfunc), repr(arg_types), repr(sorted(options.items())),
             toolchain_key(target_id)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _path(name, key):
    return os.path.join(config.cache_dir, f"{name}-{key[:32]}.simtc")


def load(name, key):
    if not config.cache:
        return None
    try:
        with open(_path(name, key), "rb") as f:
            stored_key, binary = pickle.load(f)
        return binary if stored_key == key else None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None


def store(name, key, binary):
    if not config.cache:
        return
    try:
        os.makedirs(config.cache_dir, exist_ok=True)
        path = _path(name, key)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump((key, binary), f)
        os.replace(tmp, path)
    except OSError:
        pass                          # a read-only cache directory is not an error
