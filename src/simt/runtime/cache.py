"""The disk cache: compiled kernels kept across processes.

What a compile depended on is known only once the front end has run: the kernel's
source (with its file and first line, which the binary's messages name), the argument types, the options and the toolchain give the *lookup* key;
the front end then reports every global and closure name each function read, and each
attribute chain rooted at one (``cfg.N``, ``cfg.sq``), and the values of those (device
functions by their source, constants by value, intrinsics and classes by name) complete
the *full* key. An entry stores the names it depends on, so a later process finds them
again (once, at load), checks that their values still give the full key, and takes the
module-level symbols' objects from them. Two kernels of one source that read different
values (a factory closing over different device functions or constants) have one lookup
key and two entries. Values are those compiler/source.py froze at their first read in
the process, so a load never mixes with a compile what the process saw.

An entry carries the SHA-256 of its payload; one that does not match (truncated, bits
flipped, another program's file) is removed with a warning and the kernel compiled again:
a damaged entry never reaches the unpickler or the loader of machine code."""
import glob
import hashlib
import os
import pickle
import sys
import types as pytypes
import warnings
from enum import Enum

import numpy as np

from ..compiler import source
from ..ir.records import STRUCT_STEP
from ..config import config
from ..errors import CompileError
from ..version import __version__

FORMAT = 4
MAGIC = b"simt-cache-entry\n"


def dependencies(fn):
    """[(path, name, value)]: each global or closure name the kernel's typed IR ``fn``
    and the device functions it calls read; ``path`` is the chain of names through
    which the function that read it is reached from the kernel (() for the kernel)."""
    out = []
    seen = {id(fn)}
    owned = _lambdas(fn)

    def visit(function, path):
        seen.add(id(function))        # a recursive device function: visited once
        callees = list(function.callees)
        for body in owned.get(id(function), ()):     # what the lambdas it makes call
            callees += body.callees
        for name, value in sorted(function.reads.items()):
            out.append((path, name, value))
            device = _fallback(value)
            cached = getattr(device, "ir_cache", None)
            if cached is not None and hasattr(device, "_simt_device"):
                for callee in callees:
                    if id(callee) not in seen and any(callee is f for f in cached.values()):
                        visit(callee, path + (name,))
            if hasattr(value, "_simt_kernel"):        # launched from the kernel (family.py)
                for child in fn.launches:
                    if getattr(child, "pyfunc", None) is value.pyfunc and id(child) not in seen:
                        seen.add(id(child))
                        visit(child, path + (name,))
        for callee in callees:     # struct methods: reached through types, not names
            from ..lang import structs      # (here: see _struct_method)
            step = structs.method_step(callee) if id(callee) not in seen else None
            if step is not None:
                out.append((path, step, structs.method_at(step)))
                visit(callee, path + (step,))
    visit(fn, ())
    return out


def _lambdas(fn):
    """{id of a function: the lambdas written in it} among the functions ``fn`` reaches
    (compiler/lambdas.py): a lambda's reads are those of the function it is written in,
    wherever it is called, so that function's path finds what the lambda calls."""
    owned, stack, seen = {}, [fn], set()
    while stack:
        function = stack.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        owner = getattr(function, "lambda_owner", None)
        if owner is not None:
            owned.setdefault(owner, []).append(function)
        stack += function.callees
    return owned


def _struct_method(step):
    from ..lang import structs      # only for struct methods: a cached kernel's load needs
    return structs.method_at(step)  # no kernel language


def resolve(pyfunc, path, name):
    """(found, value) of ``name`` (a name or an attribute chain) as the function at
    ``path`` from ``pyfunc`` sees it: the value this process froze at its first read."""
    if name.startswith(STRUCT_STEP):
        method = _struct_method(name)
        return method is not None, method
    for step in path:
        if step.startswith(STRUCT_STEP):     # a struct method: found by its class's token
            method = _struct_method(step)
            if method is None:
                return False, None
            pyfunc = method.pyfunc
            continue
        found, value = source.read(pyfunc, step)
        value = _fallback(value)
        if not found or not (hasattr(value, "_simt_device") or hasattr(value, "_simt_kernel")):
            return False, None
        pyfunc = value.pyfunc
    return source.read(pyfunc, name)


def _fallback(value):
    """The fallback device function of external device code (simt.declare_device), whose
    reads are the caller's dependencies too; any other value itself."""
    if not isinstance(value, pytypes.ModuleType) and getattr(value, "_simt_extern", False) \
            and value.fallback is not None:
        return value.fallback
    return value


def value_key(value):
    """What of a value the compiled code depends on, as a string."""
    if isinstance(value, pytypes.ModuleType):     # first: simt's own answers any name
        return "module:" + value.__name__
    if getattr(value, "_simt_extern", False):    # declare_device: its files' contents
        fallback = value.fallback
        return value.key() + (f"|fallback:{_source_hash(fallback.pyfunc)}" if fallback else "")
    if hasattr(value, "pyfunc"):                 # device functions, kernels (child launches)
        inline = getattr(value, "inline", None)   # @simt.device(inline=...) changes the code
        return f"function:{_source_hash(value.pyfunc)}" + (f"|inline={inline}" if inline else "")
    if isinstance(value, (bool, int, float, complex, str, np.generic)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple):
        return "(" + ",".join(value_key(v) for v in value) + ")"
    if isinstance(value, np.ndarray):    # read by simt.const.array_like only: baked in
        return "ndarray:" + hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest() + \
            str(value.dtype) + str(value.shape)
    info = getattr(value, "_simt_struct", None) if isinstance(value, type) else None
    if info is not None:
        return "struct:" + info.token     # its token hashes its source
    if isinstance(value, (type, pytypes.FunctionType, pytypes.BuiltinFunctionType)):
        return f"{type(value).__name__}:{value.__module__}.{value.__qualname__}"
    kind = type(value)
    if kind.__module__.split(".")[0] != "simt" and \
            not isinstance(value, (np.dtype, np.ufunc, Enum, bytes, type(None))):
        # another object: a namespace, whose attributes the kernel read are keys of their
        # own (its repr may show values the kernel never reads: a random array)
        return f"object:{kind.__module__}.{kind.__qualname__}"
    if kind.__repr__ is not object.__repr__:        # intrinsics, namespaces, dtypes
        return f"{kind.__name__}:{value!r}"
    shape = getattr(value, "shape", None)            # Constant/Global: placed at launch
    return f"{kind.__name__}:{shape}:{getattr(value, 'dtype', '')}"


def _source_hash(pyfunc):
    """The hash of a function's source, its file and its first line, found once per code
    object: what a process compiles from a code object cannot change while the process
    runs. The file and line are in it because the binary keeps them for its messages (a
    failed assert, a fault, checked mode): two scripts holding one kernel text must not
    share an entry, or the second's errors would name the first's file and lines."""
    code = getattr(pyfunc, "__code__", None)
    digest = _source_hashes.get(code)
    if digest is None:
        try:
            lines, first, filename = source.source_lines(pyfunc)
            if not filename.startswith("<"):
                filename = os.path.abspath(filename)
            text = f"{filename}:{first}\n{''.join(lines)}".encode()
        except CompileError:
            text = code.co_code if code is not None else repr(pyfunc).encode()
        digest = hashlib.sha256(text).hexdigest()
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
    shared = ("fault.py", "errors.py", "config.py", "lazy.py", "diskblob.py", "devstreams.py")
    paths = [os.path.join(_ROOT, name) for name in shared]
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
    """``lookup`` completed by the values of the dependencies ([(path, name, value)]).
    A name of simt's own (``simt.syncthreads``, read through the simt package) is keyed by
    its name: its value is fixed by simt's source, which the lookup key holds, and reading
    it again would load the kernel language just to look a kernel up."""
    return _hash([lookup] + [f"{'.'.join(path)}/{name}=" +
                             ("simt" if _simt_name(deps, path, name) else value_key(value))
                             for path, name, value in deps])


def _simt_name(deps, path, name):
    """Whether ``name`` is an attribute chain rooted at a name bound to the simt package."""
    root, dot, _ = name.partition(".")
    return bool(dot) and any(p == path and n == root and v is sys.modules.get("simt")
                             for p, n, v in deps)


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
        entry = _read(path)
        if entry is None:
            continue
        stored_lookup, full, names, symbol_refs, binary = entry
        if stored_lookup != lookup:
            continue
        deps = []
        for dep_path, dep_name in names:
            if _simt_name(deps, dep_path, dep_name):
                deps.append((dep_path, dep_name, None))    # fixed by simt's source
                continue
            found, value = resolve(pyfunc, dep_path, dep_name)
            if not found:
                break
            deps.append((dep_path, dep_name, value))
        else:
            if full_key(lookup, deps) == full:
                for part, refs in zip(_binaries(binary), symbol_refs):
                    part.symbol_objects = [deps[i][2] for i in refs]
                return binary, deps
    return None


def _binaries(binary):
    """The binary and those of the kernels it launches (a CPU binary keeps them)."""
    return [binary, *getattr(binary, "children", ())]


def _read(path):
    """The entry in ``path``; None (the file removed, with a warning) when it is damaged."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head, digest, payload = data[:len(MAGIC)], data[len(MAGIC):len(MAGIC) + 32], \
        data[len(MAGIC) + 32:]
    if head != MAGIC:
        return _discard(path, "not a simt cache entry")
    if hashlib.sha256(payload).digest() != digest:
        return _discard(path, "its checksum does not match: truncated or corrupted")
    try:
        entry = pickle.loads(payload)
    except Exception as exc:       # a payload that matches its checksum but not this simt
        return _discard(path, f"it cannot be read: {type(exc).__name__}")
    if not isinstance(entry, tuple) or len(entry) != 5:
        return _discard(path, "not a simt cache entry")
    return entry


def _discard(path, why):
    warnings.warn(f"simt: discarded the disk cache entry {path} ({why}); the kernel is "
                  "compiled again", RuntimeWarning, stacklevel=5)
    try:
        os.remove(path)
    except OSError:
        pass


def store(name, lookup, deps, binary):
    """Keep ``binary`` under its full key, with the names of its dependencies and, for
    each module-level symbol it uses, which of them holds it; the payload's checksum
    goes before it."""
    if not config.cache:
        return
    refs = [[next((i for i, (_, _, value) in enumerate(deps) if value is obj), None)
             for obj in part.symbol_objects] for part in _binaries(binary)]
    if any(None in part for part in refs):   # a symbol not among the dependencies: not
        return                               # found again by name, so kept in memory only
    names = [(path, dep_name) for path, dep_name, _ in deps]
    full = full_key(lookup, deps)
    payload = pickle.dumps((lookup, full, names, refs, binary))
    try:
        os.makedirs(config.cache_dir, exist_ok=True)
        path = _path(name, lookup, full)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
    except OSError:
        pass                          # a read-only cache directory is not an error
