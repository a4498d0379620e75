"""Device code from other files, linked into kernels: ``simt.declare_device``.

``f = simt.declare_device("my_fma", "float32(float32, float32, float32)", link=["f.cu"],
fallback=None)`` names an external device function (CUDA C++ ``extern "C" __device__``, a
``.func`` of hand-written PTX, LTO-IR) that kernels and device functions call like a
``@simt.device`` function. The GPU calls the external symbol and its kernel is linked with
the ``link`` files (the GPU back end's linker.py); the cpu and sim devices run ``fallback``, a
``@simt.device`` function with the same signature, and without one a call is a
NotSupportedError naming the function (the devices ``refuse`` EXTERN with NO_FALLBACK). ``@simt.kernel(link=[...])`` links whole files into
a kernel, so functions declared without ``link=`` find their definitions there.

The files are read when they are named (declare_device, @simt.kernel): their contents are
what the kernel links and what the cache keys hold (``LinkFile.key``).
"""
import hashlib
import inspect
import os
import re

import numpy as np

from ..ir import types as T
from .registry import Intrinsic

SUFFIXES = {".cu": "cxx", ".ptx": "ptx", ".ltoir": "ltoir", ".cubin": "cubin",
            ".o": "object", ".fatbin": "fatbin", ".a": "library"}
SCALARS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64")
_SIGNATURE = re.compile(r"^\s*(?P<result>\w+\s*\**)\s*\((?P<args>.*)\)\s*$")


class LinkFile:
    """A file to link, read once: its path, its kind (by suffix) and its contents."""

    def __init__(self, path, data, kind):
        self.path = path
        self.data = data
        self.kind = kind
        self.digest = hashlib.sha256(data).hexdigest()

    def key(self):
        return f"{self.kind}:{os.path.basename(self.path)}:{self.digest}"

    def __repr__(self):                 # CompileOptions.key() holds it: contents included
        return f"LinkFile({self.key()})"

    def __eq__(self, other):
        return isinstance(other, LinkFile) and other.key() == self.key()

    def __hash__(self):
        return hash(self.key())


def read_link_files(paths, what, folder=None):
    """The LinkFiles of ``paths`` (a path or a list of them). A relative path is found
    from the current directory, else from ``folder`` (the folder of the Python file that
    names it); a missing file or an unknown suffix is an error naming it."""
    if paths is None:
        return ()
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    caller = folder
    files = []
    for path in paths:
        path = os.fspath(path)
        kind = SUFFIXES.get(os.path.splitext(path)[1].lower())
        if kind is None:
            raise ValueError(f"{what}: cannot link {path!r}: its suffix says no kind of "
                             f"device code; simt links {', '.join(SUFFIXES)} files")
        found = path if os.path.isabs(path) or caller is None or os.path.exists(path) \
            else os.path.join(caller, path)
        try:
            with open(found, "rb") as f:
                files.append(LinkFile(os.path.abspath(found), f.read(), kind))
        except OSError as exc:
            raise FileNotFoundError(f"{what}: cannot read the file to link {path!r} "
                                    f"({exc.strerror or exc})") from None
    return tuple(files)


def source_folder(filename):
    """The folder of a Python source file, or None (code typed at a prompt)."""
    return os.path.dirname(os.path.abspath(filename)) if filename and \
        os.path.exists(filename) else None


class Param:
    """One type of a declared signature: a scalar, or a pointer to one (``float32*``),
    which takes an array and passes its data pointer."""

    def __init__(self, dtype, pointer=False):
        self.dtype = np.dtype(dtype)
        self.pointer = pointer

    def __str__(self):
        return f"{self.dtype.name}{'*' if self.pointer else ''}"


def parse_signature(signature, name):
    """(result Param or None for void, [Param]) of ``"float32(float32, int32*)"``; a
    ValueError naming what is wrong otherwise."""
    if not isinstance(signature, str):
        raise TypeError(f"simt.declare_device({name!r}): the signature is a string such as "
                        f"'float32(float32, float32)'; got {signature!r}")
    match = _SIGNATURE.match(signature)
    if match is None:
        raise ValueError(f"simt.declare_device({name!r}): cannot read the signature "
                         f"{signature!r}; write it as 'result(arg, arg, ...)', e.g. "
                         "'float32(float32, int32*)'")
    result = None if match["result"].strip() == "void" else \
        _param(match["result"], name, signature)
    if result is not None and result.pointer:
        raise ValueError(f"simt.declare_device({name!r}): a declared function cannot return "
                         "a pointer")
    text = match["args"].strip()
    args = [_param(a, name, signature) for a in text.split(",")] if text else []
    return result, args


def _param(text, name, signature):
    text = text.strip()
    pointer = text.endswith("*")
    base = text.rstrip("*").strip()
    if base not in SCALARS or text.count("*") > 1:
        raise ValueError(f"simt.declare_device({name!r}): {text!r} in the signature "
                         f"{signature!r} is not a type simt passes to external device code; "
                         f"use {', '.join(SCALARS)}, a pointer to one (float32*), or void "
                         "for no result")
    return Param(base, pointer)


class ExternFunction:
    """A device function defined outside Python (simt.declare_device): callable in kernels
    and device functions; ``fallback`` runs it on the devices that link no device code."""

    kernel_callable = True
    _simt_extern = True

    def __init__(self, name, signature, link=None, fallback=None, folder=None):
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_$][\w$]*$", name):
            raise ValueError(f"simt.declare_device: {name!r} is not a symbol name; give the "
                             "function's extern \"C\" name (or its mangled C++ name)")
        self.name = self.__name__ = name
        self.signature = signature
        self.result, self.params = parse_signature(signature, name)
        self.files = read_link_files(link, f"simt.declare_device({name!r})", folder)
        if fallback is not None and not hasattr(fallback, "_simt_device"):
            raise TypeError(f"simt.declare_device({name!r}): fallback must be a "
                            f"@simt.device function with the same signature; got {fallback!r}")
        self.fallback = fallback

    def key(self):
        """What compiled code depends on: the name, the signature, the files' contents and
        the fallback's source (runtime/cache.py)."""
        files = ",".join(f.key() for f in self.files)
        return f"extern:{self.name}:{self.signature}:[{files}]"

    @property
    def result_type(self):
        return T.VOID if self.result is None else T.Scalar(self.result.dtype)

    def build(self, fc, args, kwargs, loc):
        """A call in a kernel: arguments checked against the signature, then a call of
        the fallback (ir.CallDevice with ``extern`` set) or of the external name only."""
        if kwargs:
            fc.fail(loc, f"{self.name}() takes its arguments by position")
        if len(args) != len(self.params):
            fc.fail(loc, f"{self.name}() takes {len(self.params)} arguments "
                    f"({self.signature}), got {len(args)}")
        values = [self._argument(fc, fc.expr(a, loc), p, i, loc)
                  for i, (a, p) in enumerate(zip(args, self.params))]
        if self.fallback is None:
            return EXTERN.node(self.result_type, loc, values,
                               {"extern": self, "called": f"{self.name} (simt.declare_device)"})
        call = fc.call_device(self.fallback, values, loc)
        if call.type != self.result_type:
            fc.fail(loc, f"the fallback '{self.fallback.__name__}' of {self.name} returns "
                    f"{call.type}, but the signature {self.signature!r} returns "
                    f"{self.result_type}", "make the fallback return the declared type")
        call.extern = self
        return call

    def _argument(self, fc, value, param, i, loc):
        if not param.pointer:
            if not isinstance(value.type, T.Scalar):
                fc.fail(loc, f"argument {i + 1} of {self.name}() is a {param}; got "
                        f"{value.type}")
            return fc.cast(value, T.Scalar(param.dtype), loc)
        if not isinstance(value.type, T.Array) or value.type.dtype != param.dtype:
            fc.fail(loc, f"argument {i + 1} of {self.name}() is a {param}: pass an array of "
                    f"{param.dtype.name}; got {value.type}")
        return value

    def __call__(self, *args):
        raise RuntimeError(f"{self.name} is external device code (simt.declare_device): it "
                           "can only be called from kernels and device functions")

    def __repr__(self):
        return f"<simt external device function {self.name}: {self.signature}>"


def declare_device(name, signature, link=None, fallback=None):
    """An external device function, callable in kernels: ``name`` is its symbol (an
    ``extern "C" __device__`` function in CUDA C++, or a mangled C++ name), ``signature``
    its types as ``"float32(float32, int32*)"`` (scalars, pointers passed as arrays, void),
    ``link`` the files that define it (.cu compiled by NVRTC, .ptx, .ltoir, .cubin, .o,
    .fatbin), ``fallback`` a ``@simt.device`` function the cpu and sim devices run instead."""
    caller = inspect.currentframe().f_back
    return ExternFunction(name, signature, link, fallback,
                          source_folder(caller.f_code.co_filename if caller else None))


NO_FALLBACK = ("it is external device code, which only GPUs link: give "
               "simt.declare_device(name, signature, link=..., fallback=f) a @simt.device "
               "function f with the same signature to run it on this device")


EXTERN = Intrinsic(
    "extern_call", "A call of external device code declared with simt.declare_device "
    "(built by its typing rule; not a name kernels use).", public=False,
    python_name="simt.declare_device")
