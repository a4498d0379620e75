"""The native launch trampoline's machine code, kept in the disk cache so that a process
loads it without LLVM.

The trampoline (launch.py) reads cuLaunchKernel's address and arguments from a descriptor
and calls it: code with no relocations (no globals, no constants), so its bytes run
wherever they are mapped. The first process that has LLVM makes it for the architecture's
baseline CPU (not this host's features: a cache folder may be shared between machines),
takes the function's bytes out of the ELF object, and keeps them beside the kernels; later
processes map the file's bytes executable (mmap) and call them through ctypes. Importing
llvmlite and running its code generator cost a process tens to hundreds of milliseconds
(hundreds without bytecode caches), at a configuration's second launch or, made in the
background, as GIL time taken from the launches meanwhile.
"""
import ctypes
import hashlib
import mmap
import os
import platform
import struct
import sys
import threading

from ...diskblob import read as read_blob, write as write_blob

_kept = []          # the executable mappings: code stays mapped for the process's life


def _path(ir):
    from ...config import config
    key = hashlib.sha256(f"{ir}|{sys.platform}|{platform.machine()}|baseline-1".encode()
                         ).hexdigest()[:32]
    return os.path.join(config.cache_dir, f"cuda-launch-{key}.code")


def load_cached(ir):
    """The address of the cached code of ``ir``'s function, mapped executable; None when
    there is none (or it is damaged, or the cache is off, or mapping fails)."""
    code = read_blob(_path(ir))
    return None if code is None else _map(code)


def make(ir, name):
    """Make ``ir`` with LLVM for the baseline CPU, keep its function ``name``'s bytes in
    the cache, and return their mapped address; None where the object cannot be used so
    (relocations, not ELF64): the caller then links the object with LLVM."""
    from .. import hostjit as jit
    code = function_bytes(jit.baseline_object(ir), name)
    if code is None:
        return None
    write_blob(_path(ir), code)
    return _map(code)


def function_bytes(obj, name):
    """The bytes of function ``name`` in an ELF64 little-endian relocatable object, or
    None when it is not one or the function's section has relocations."""
    if obj[:6] != b"\x7fELF\x02\x01":
        return None
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize)
                for i in range(shnum)]
    for symtab in (s for s in sections if s[1] == 2):                   # SHT_SYMTAB
        strtab = sections[symtab[6]]
        for at in range(symtab[4], symtab[4] + symtab[5], 24):
            st_name, _, _, shndx, value, size = struct.unpack_from("<IBBHQQ", obj, at)
            end = obj.index(b"\0", strtab[4] + st_name)
            if obj[strtab[4] + st_name:end] != name.encode() or not 0 < shndx < shnum:
                continue
            if any(s[1] in (4, 9) and s[7] == shndx and s[5] for s in sections):   # REL(A)
                return None
            start = sections[shndx][4] + value
            return bytes(obj[start:start + size]) if size else None
    return None


def _map(code):
    try:
        area = mmap.mmap(-1, len(code),
                         prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except (OSError, ValueError, AttributeError):     # W+X refused (hardened kernels)
        return None
    area.write(code)
    _kept.append(area)
    return ctypes.addressof(ctypes.c_char.from_buffer(area))


# ---------------------------------------------------------------- calling it from Python

_api_addresses = {}


def python_api(names):
    """The addresses of these Python C-API functions (found once: each lookup through
    ctypes costs microseconds, paid at a configuration's second launch otherwise)."""
    missing = [name for name in names if name not in _api_addresses]
    for name in missing:
        _api_addresses[name] = ctypes.cast(getattr(ctypes.pythonapi, name),
                                           ctypes.c_void_p).value
    return [_api_addresses[name] for name in names]


def _bytes_data_offset():
    """Where a bytes object's data starts from its address (CPython keeps it inline:
    32 bytes on 64-bit builds with the GIL); None when it cannot be found."""
    probe = bytes(range(7, 7 + 48))
    found = ctypes.string_at(id(probe), sys.getsizeof(probe)).find(probe)   # the object only
    return found if found > 0 else None


DATA_OFFSET = _bytes_data_offset()


class _MethodDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p),
                ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


METH_NOARGS, METH_FASTCALL = 0x0004, 0x0080
_method_defs = {}       # code address -> its PyMethodDef, alive for the process


_new_builtin = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.py_object,
                                 ctypes.py_object)(("PyCFunction_NewEx", ctypes.pythonapi))


def builtin(code, data, flags=METH_NOARGS, keep=None):
    """A builtin function object (PyCFunction; METH_NOARGS unless ``flags`` says another
    calling convention) running the native code at ``code`` with ``data`` (a descriptor's
    bytes) as its bound object. ``keep``: objects whose addresses the descriptor holds,
    kept alive as long as the function (in its ``__module__`` slot, which CPython only
    stores)."""
    method = _method_defs.get((code, flags))
    if method is None:
        method = _method_defs[code, flags] = _MethodDef(b"simt_launch", code, flags, None)
    return _new_builtin(ctypes.addressof(method), data, keep)


_cu = []


def cu_launch_address():
    """The address of libcuda's cuLaunchKernel (the driver cuda.bindings also calls)."""
    if not _cu:
        try:
            _cu.append(ctypes.cast(ctypes.CDLL("libcuda.so.1").cuLaunchKernel,
                                   ctypes.c_void_p).value)
        except (OSError, AttributeError):
            _cu.append(None)
    return _cu[0]


class NativeCode:
    """One of simt's native launch helpers: ``ir()`` gives its LLVM IR (or raises OSError
    where it cannot be used in this process), ``name`` its function. ``address()`` is its
    code's address: from the disk cache, else made with LLVM (its bytes kept in the cache,
    or, for an object with relocations, linked by LLVM's loader); None where it cannot be
    had. ``address(wait=False)`` never makes it on the caller's thread, nor waits for
    LLVM: it starts making it in the background (``soon``) and answers None meanwhile (a
    launch function bound then packs in Python until ``when_made`` tells its owner)."""

    def __init__(self, name, ir):
        self.name = name
        self.ir = ir
        self.made = []                  # [address or None, what keeps the code] once made
        self.loading = threading.Lock()     # held while reading the disk cache
        self.making = threading.Lock()      # held while LLVM makes it
        self.started = False
        self.waiting = []               # hooks to call once it is made

    def when_made(self, hook):
        """Call ``hook()`` once the code's address is known (now if it is), on the thread
        that made it; never where it cannot be had."""
        with self.loading:
            if not self.made:
                self.waiting.append(hook)
                return
        if self.made[0] is not None:
            hook()

    def _tell(self):
        with self.loading:
            hooks, self.waiting = self.waiting, []
        if self.made[0] is not None:
            for hook in hooks:
                hook()

    def soon(self):
        """Start making it on a thread (a kernel was loaded): LLVM takes tens of ms, which
        a configuration's second launch, where launch functions are bound, used to pay."""
        if not self.made and not self.started:
            self.started = True
            threading.Thread(target=self.address, name=f"simt-{self.name}", daemon=True).start()

    def address(self, wait=True):
        if not self.made:
            with self.loading:
                if not self.made:           # its machine code from the disk cache: no LLVM
                    try:
                        found = load_cached(self.ir())
                    except OSError:
                        found = None
                    if found is not None:
                        self.made.extend((found, None))
            if self.made:
                self._tell()
            if not self.made and not wait:
                self.soon()
                return None
            with self.making:
                if not self.made:
                    made = self._make()
                    with self.loading:
                        self.made.extend(made)
                    self._tell()
        return self.made[0]

    def _make(self):
        try:
            ir = self.ir()
            found = make(ir, self.name)
            if found is not None:
                return found, None
            from .. import hostjit as jit
            loaded = jit.LoadedObject(jit.cached_object(self.name, ir, speed=2))
            return loaded.address(self.name), loaded
        except Exception:               # no native route: the launch functions' Python one works
            return None, None
