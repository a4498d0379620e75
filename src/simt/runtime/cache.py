"""The disk cache: compiled kernels kept across processes.

What a compile depended on is known only once the front end has run: the kernel's
source, the argument types, the options and the toolchain give the *lookup* key;
the front end then reports every global and closure name each function read, and
the values of those (device functions by their source, constants by value,
intrinsics and classes by name) complete the *full* key. An entry stores the
names it depends on, so a later process finds them again (once, at load), checks
that their values still give the full key, and takes the module-level symbols'
objects from them. Two kernels of one source that read different values (a factory
closing over different device functions or constants) have one lookup key and two
entries."""
import glob
import hashlib
import inspect
import os
import pickle
import sys
import types as pytypes

import numpy as np

from ..config import config
from ..version import __version__

FORMAT = 2


def dependencies(fn):
    """[(path, name, value)]: each global or closure name the kernel's typed IR ``fn``
    and the device functions it calls read; ``path`` is the chain of names through
    which the function that read it is reached from the kernel (() for the kernel)."""
    out = []

    def visit(function, path):
        for name, value in sorted(function.reads.items()):
            out.append((path, name, value))
            cached = getattr(value, "ir_cache", None)
            if cached is not None and hasattr(value, "_simt_device"):
                for callee in function.callees:
                    if any(callee is f for f in cached.values()):
                        visit(callee, path + (name,))
    visit(fn, ())
    return out


def resolve(pyfunc, path, name):
    """(found, value) of ``name`` as the function at ``path`` from ``pyfunc`` sees it."""
    for step in path:
        found, value = _lookup(pyfunc, step)
        if not found or not hasattr(value, "_simt_device"):
            return False, None
        pyfunc = value.pyfunc
    return _lookup(pyfunc, name)


def _lookup(pyfunc, name):
    if pyfunc.__closure__:
        for free, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
            if free == name:
                try:
                    return True, cell.cell_contents
                except ValueError:
                    return False, None
    if name in pyfunc.__globals__:
        return True, pyfunc.__globals__[name]
    return False, None


def value_key(value):
    """What of a value the compiled code depends on, as a string."""
    if hasattr(value, "pyfunc"):                 # device functions, kernels (child launches)
        return f"function:{_source_hash(value.pyfunc)}"
    if isinstance(value, (bool, int, float, complex, str, np.generic)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple):
        return "(" + ",".join(value_key(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        return "ndarray:" + hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest() + \
            str(value.dtype) + str(value.shape)
    if isinstance(value, pytypes.ModuleType):
        return "module:" + value.__name__
    if isinstance(value, (type, pytypes.FunctionType, pytypes.BuiltinFunctionType)):
        return f"{type(value).__name__}:{value.__module__}.{value.__qualname__}"
    if type(value).__repr__ is not object.__repr__:   # intrinsics, namespaces, dtypes
        return f"{type(value).__name__}:{value!r}"
    shape = getattr(value, "shape", None)               # Constant/Global: placed at launch
    return f"{type(value).__name__}:{shape}:{getattr(value, 'dtype', '')}"


def _source_hash(pyfunc):
    """The hash of a function's source, found once per code object: what a process
    compiles from a code object cannot change while the process runs."""
    code = getattr(pyfunc, "__code__", None)
    digest = _source_hashes.get(code)
    if digest is None:
        try:
            source = inspect.getsource(pyfunc).encode()
        except (OSError, TypeError):
            source = code.co_code if code is not None else repr(pyfunc).encode()
        digest = hashlib.sha256(source).hexdigest()
        if code is not None:
            _source_hashes[code] = digest
    return digest


_source_hashes = {}          # code object -> source hash


_SOURCE_HASH = []
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hashed_sources():
    """The simt sources that make binaries: the IR and its passes, lang, the compiler, the
    back ends, and the modules they share (tests/test_layers.py checks that this covers
    everything the compile hooks import)."""
    paths = [os.path.join(_ROOT, name) for name in ("fault.py", "errors.py", "config.py", "lazy.py")]
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
    """The entry format, simt's version and the source of its code generator,
    llvmlite, the target and Python."""
    import llvmlite
    return (f"{FORMAT}|{__version__}|{_simt_source_hash()}|llvmlite {llvmlite.__version__}|"
            f"{target_id}|{sys.version_info[:2]}")


def lookup_key(pyfunc, arg_types, options, target_id):
    """The kernel's source, argument types, options (CompileOptions.key) and toolchain."""
    parts = [_source_hash(pyfunc), repr(tuple(arg_types)), options.key(),
             toolchain_key(target_id)]
    return _hash(parts)


def full_key(lookup, deps):
    """``lookup`` completed by the values of the dependencies ([(path, name, value)])."""
    return _hash([lookup] + [f"{'.'.join(path)}/{name}={value_key(value)}"
                             for path, name, value in deps])


def _hash(parts):
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _path(name, lookup, full):
    return os.path.join(config.cache_dir, f"{name}-{lookup[:20]}-{full[:20]}.simtc")


def load(name, pyfunc, lookup):
    """(binary with its symbol objects, deps) stored under ``lookup`` whose dependencies
    still have the values it was compiled with; None when there is none."""
    if not config.cache:
        return None
    for path in sorted(glob.glob(_path(glob.escape(name), lookup, "*"))):
        try:
            with open(path, "rb") as f:
                stored_lookup, full, names, symbol_refs, binary = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError,
                ValueError, TypeError):
            continue
        if stored_lookup != lookup:
            continue
        deps = []
        for dep_path, dep_name in names:
            found, value = resolve(pyfunc, dep_path, dep_name)
            if not found:
                break
            deps.append((dep_path, dep_name, value))
        else:
            if full_key(lookup, deps) == full:
                binary.symbol_objects = [deps[i][2] for i in symbol_refs]
                return binary, deps
    return None


def store(name, lookup, deps, binary):
    """Keep ``binary`` under its full key, with the names of its dependencies and, for
    each module-level symbol it uses, which of them holds it."""
    if not config.cache:
        return
    refs = [next((i for i, (_, _, value) in enumerate(deps) if value is obj), None)
            for obj in binary.symbol_objects]
    if None in refs:             # a symbol reached otherwise (a module's attribute): not
        return                   # found again by name, so kept in memory only
    names = [(path, dep_name) for path, dep_name, _ in deps]
    full = full_key(lookup, deps)
    try:
        os.makedirs(config.cache_dir, exist_ok=True)
        path = _path(name, lookup, full)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump((lookup, full, names, refs, binary), f)
        os.replace(tmp, path)
    except OSError:
        pass                          # a read-only cache directory is not an error
