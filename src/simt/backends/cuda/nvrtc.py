"""CUDA C++ compiled at run time by NVRTC (cuda.bindings.nvrtc), for SourceModule.

``compile_source`` gives a cubin for the GPU's architecture, NVRTC's log, and the lowered
(mangled) names of the C++ name expressions asked for; a failed compile raises
CompileError whose ``why`` is the log and whose ``line`` is the first error's line.
``nvrtc`` is the module to call: cuda.bindings.nvrtc unless a test gives a stand-in.
"""
import re

from simt.errors import CompileError, CudaError

_ERROR_LINE = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?:catastrophic )?error: "
                         r"(?P<what>.*)$", re.MULTILINE)


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
        nvrtc.nvrtcVersion()            # loads libnvrtc, which may be missing
    except Exception as exc:
        raise CudaError(f"NVRTC is not available ({exc}): SourceModule needs cuda-bindings "
                        "with NVRTC (pip install nvidia-cuda-nvrtc for CUDA 13, "
                        "nvidia-cuda-nvrtc-cu12 for CUDA 12, or a CUDA toolkit)") from None
    return nvrtc


def _check(nvrtc, result, what):
    err = result[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        text = nvrtc.nvrtcGetErrorString(err)[1]
        text = text.decode() if isinstance(text, bytes) else str(text)
        raise CudaError(f"{what} failed: {text}")
    return result[1] if len(result) == 2 else None


def _text(nvrtc, prog, size_fn, get_fn, what):
    size = _check(nvrtc, size_fn(prog), what)
    if size <= 1:
        return b""          # nothing but the NUL (and 1-byte bytes objects are shared)
    buffer = bytes(size)    # a new object: the binding writes into it through char*
    _check(nvrtc, get_fn(prog, buffer), what)
    return buffer


def first_error(log):
    """(line, message) of the log's first error, or (None, the log's first line)."""
    match = _ERROR_LINE.search(log)
    if match:
        return int(match["line"]), match["what"].strip()
    lines = [line for line in log.splitlines() if line.strip()]
    return None, lines[0].strip() if lines else "NVRTC gave no log"


def compile_source(source, name, options, name_expressions, arch, nvrtc=None,
                   output="cubin"):
    """(image bytes, [(expression, lowered name)], log) for CUDA C++ ``source``; the image
    is a cubin, or with ``output`` "ptx" or "ltoir" (with -dlto) that (linker.py)."""
    nvrtc = nvrtc or _nvrtc()
    if isinstance(source, str):
        source = source.encode()
    prog = _check(nvrtc, nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], []),
                  "nvrtcCreateProgram")
    try:
        for expression in name_expressions:
            _check(nvrtc, nvrtc.nvrtcAddNameExpression(prog, expression.encode()),
                   f"nvrtcAddNameExpression({expression!r})")
        flags = [f"--gpu-architecture={arch}"] + list(options)
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(flags), [f.encode() for f in flags])
        log = _text(nvrtc, prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog,
                    "nvrtcGetProgramLog").rstrip(b"\0").decode(errors="replace").strip()
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            line, what = first_error(log)
            where = f"{name}, line {line}" if line else name
            raise CompileError(f"NVRTC could not compile {where}: {what}\nNVRTC's log "
                               f"(options {' '.join(flags)}):\n{log}", filename=name,
                               line=line, construct="CUDA C++", why=log)
        getter = "nvrtcGet" + {"cubin": "CUBIN", "ptx": "PTX", "ltoir": "LTOIR"}[output]
        image = _text(nvrtc, prog, getattr(nvrtc, getter + "Size"), getattr(nvrtc, getter),
                      getter)
        lowered = []
        for expression in name_expressions:
            mangled = _check(nvrtc, nvrtc.nvrtcGetLoweredName(prog, expression.encode()),
                             f"nvrtcGetLoweredName({expression!r})")
            lowered.append((expression, mangled.decode() if isinstance(mangled, bytes)
                            else str(mangled)))
        return bytes(image), lowered, log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
