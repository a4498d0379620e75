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
