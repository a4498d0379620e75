"""Kernels linked with device code from files (simt.declare_device, @simt.kernel(link=)):
simt's PTX and the files go through nvJitLink (cuda.bindings.nvjitlink), which makes one
cubin for the GPU's architecture without a GPU, so the compile does it and the disk cache
keeps the cubin with the kernel.

Each file by its suffix (lang/linking.SUFFIXES): ``.cu`` compiled by NVRTC as relocatable
device code (``-rdc=true``; to LTO-IR with ``-dlto`` when the link is an LTO link), ``.ptx``
as is, ``.ltoir`` (nvcc -dlto -dc) as LTO-IR, which makes the link an LTO one (``-lto``:
simt's own code then goes in as PTX, which nvJitLink compiles), ``.cubin``, ``.o``,
``.fatbin`` and ``.a`` as they are. A kernel that launches kernels gets libcudadevrt.a too.
A failed step raises CompileError naming the file and giving NVRTC's or nvJitLink's log.
"""
import os

from ...errors import CompileError, CudaError
from . import nvrtc as nvrtc_compile

KINDS = {"ptx": "PTX", "ltoir": "LTOIR", "cubin": "CUBIN", "object": "OBJECT",
         "fatbin": "FATBIN", "library": "LIBRARY"}


def _nvjitlink():
    try:
        from cuda.bindings import nvjitlink
        nvjitlink.version()             # loads libnvJitLink, which may be missing
    except Exception as exc:
        raise CudaError(f"nvJitLink is not available ({exc}): kernels that link device code "
                        "(simt.declare_device, @simt.kernel(link=...)) need cuda-bindings "
                        "and the nvJitLink library (pip install nvidia-nvjitlink for CUDA 13, "
                        "nvidia-nvjitlink-cu12 for CUDA 12, or a CUDA toolkit)") from None
    return nvjitlink


def inputs(files, arch, lto, kernel_name):
    """[(nvJitLink input kind, bytes, name)] of the LinkFiles; .cu compiled by NVRTC."""
    out = []
    for f in files:
        name = os.path.basename(f.path)
        if f.kind == "cxx":
            output = "ltoir" if lto else "ptx"
            flags = ["-rdc=true", f"-I{os.path.dirname(f.path)}"] + (["-dlto"] if lto else [])
            image, _, _ = nvrtc_compile.compile_source(f.data, f.path, flags, [], arch,
                                                       output=output)
            out.append(("LTOIR" if lto else "PTX", image, name))
        else:
            out.append((KINDS[f.kind], f.data, name))
    return out


def link(ptx, files, arch, kernel_name, devrt=None, line_info=False, nvjitlink=None):
    """The cubin of simt's ``ptx`` linked with ``files`` (LinkFiles) for ``arch``
    ("sm_90"); ``devrt`` the path of libcudadevrt.a for kernels that launch kernels."""
    lto = any(f.kind == "ltoir" for f in files)
    parts = [("PTX", ptx.encode() + b"\0", f"{kernel_name}.ptx")] + \
        inputs(files, arch, lto, kernel_name)
    if devrt is not None:
        with open(devrt, "rb") as f:
            parts.append(("LIBRARY", f.read(), os.path.basename(devrt)))
    nvjitlink = nvjitlink or _nvjitlink()
    options = [f"-arch={arch}"] + (["-lto"] if lto else []) + (["-lineinfo"] if line_info else [])
    handle = nvjitlink.create(len(options), options)
    step = "nvJitLinkCreate"
    try:
        for kind, data, name in parts:
            step = f"adding {name}"
            nvjitlink.add_data(handle, getattr(nvjitlink.InputType, kind), data, len(data), name)
        step = "linking"
        nvjitlink.complete(handle)
        return _read(nvjitlink.get_linked_cubin, handle,
                     nvjitlink.get_linked_cubin_size(handle))
    except nvjitlink.nvJitLinkError as exc:
        log = _log(nvjitlink, handle)
        names = ", ".join(name for _, _, name in parts[1:]) or "no files"
        raise CompileError(f"kernel '{kernel_name}': nvJitLink failed {step} (linking "
                           f"{kernel_name}.ptx with {names}, {' '.join(options)}): {exc}\n"
                           f"nvJitLink's log:\n{log or '(nothing)'}",
                           filename=names, construct="linking device code", why=log) from None
    finally:
        nvjitlink.destroy(handle)


def _log(nvjitlink, handle):
    try:
        size = nvjitlink.get_error_log_size(handle)
        if size <= 1:
            return ""
        text = _read(nvjitlink.get_error_log, handle, size)
        return text.rstrip(b"\0").decode(errors="replace").strip()
    except Exception:
        return ""


def _read(get, handle, size):
    """What ``get(handle, buffer)`` writes into a buffer of ``size`` bytes: cuda-bindings
    13.5 wants a writable buffer, earlier ones wrote into a bytes object."""
    buffer = bytearray(size)
    try:
        get(handle, buffer)
    except (TypeError, ValueError, BufferError):
        buffer = bytes(size)
        get(handle, buffer)
    return bytes(buffer)
