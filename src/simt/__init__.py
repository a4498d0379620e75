"""simt: the CUDA programming model in Python.

Kernels are Python functions compiled for NVIDIA GPUs and for the CPU, launched
over a grid of thread blocks: ``kernel[blocks, threads](args)``.

``import simt`` loads only the errors; every other public name is loaded from its module
at its first use (PEP 562: a program that never launches never loads the runtime, and on
machines without bytecode caches each module costs its compile from source).
docs/architecture.md lists the layers the names come from. Type checkers cannot follow
this: __init__.pyi names the same names for them, written from these tables by
tools/gen_stub.py (tests/test_typing.py fails when the two differ).
"""
import importlib as _importlib
import os as _os
import sys as _sys

from .version import __version__
from .errors import (CudaError, CompileError, CompileWarning, InvalidConfiguration,
                     LaunchError, IllegalAddressError, DeviceAssertError, MisalignedAddressError,
                     RaceConditionError, BarrierDivergenceError, UninitializedReadError,
                     NarrowingConversionError,
                     OutOfMemoryError, NotSupportedError, ContextUnusableError)
if _os.environ.get("SIMT_LOG_LEVEL", "").strip():    # else logging loads with the runtime
    from . import logs as _logs
    _logs.configure()

# public name -> (module, attribute there)
_HOMES = {}


def _home(module, names):
    for name in names.split():
        attribute = name
        if "=" in name:
            name, attribute = name.split("=")
        _HOMES[name] = (module, attribute)


_home("runtime.kernel", "kernel device Kernel DeviceFunction")
_home("runtime.launch", "dim3")
_home("runtime.devices", "devices get_device set_device use_device synchronize Device "
                         "set_device_flags")
_home("runtime.backend", "DeviceProperties")
_home("runtime.streams", "Stream Event default_stream stream_priority_range")
_home("runtime.graphs", "Graph")
_home("runtime.pools", "MemoryPool")
_home("runtime.memory", "pitched_array copy_2d copy_3d host_register host_unregister memset")
_home("runtime.arrays", "DeviceArray device_array empty zeros device_array_like "
                        "empty_like zeros_like mem_get_info")
_home("runtime.interop", "asarray from_dlpack to_device")
_home("runtime.hostarrays", "pinned_array mapped_array managed_array")
_home("runtime.symbols", "Constant Global Managed")
_home("runtime.pointers", "pointer_attributes PointerAttributes")
_home("runtime.uva", "copy")
_home("lang", "threadIdx blockIdx blockDim gridDim warpSize grid gridsize arch shared local const "
              "syncthreads syncthreads_count syncthreads_and syncthreads_or "
              "threadfence threadfence_block threadfence_system fence_proxy_async atomic math "
              "float_as_int "
              "int_as_float float_as_uint uint_as_float double_as_longlong longlong_as_double "
              "ldg clock clock64 globaltimer nanosleep double2hiint double2loint "
              "hiloint2double cg wmma mma wgmma tma declare_device")
_home("runtime.textures", "CudaArray MipmappedArray Texture Surface")
_home("runtime.tensormaps", "tensor_map TensorMap")
_home("runtime.modules", "Module SourceModule RawKernel")
_home("runtime.peer", "can_access_peer enable_peer_access")
_home("runtime.ipc", "open_ipc_handle")
_home("runtime.vmm", "VirtualMemory")
_home("lang.textures", "tex1D tex2D tex3D tex1DLayered tex2DLayered tex2Dgather surf1Dread "
                       "surf2Dread surf3Dread surf1Dwrite surf2Dwrite surf3Dwrite tex1DLod "
                       "tex2DLod tex3DLod tex2DGrad texCubemap texCubemapLayered "
                       "surf2DLayeredread surf2DLayeredwrite surfCubemapread surfCubemapwrite "
                       "surfCubemapLayeredread surfCubemapLayeredwrite")
_home("lang.warp", "all_sync any_sync ballot_sync activemask match_any_sync match_all_sync "
                   "reduce_add_sync reduce_min_sync reduce_max_sync reduce_and_sync "
                   "reduce_or_sync reduce_xor_sync shfl_sync shfl_up_sync shfl_down_sync "
                   "shfl_xor_sync syncwarp laneid uni_sync lanemask_lt lanemask_le lanemask_eq "
                   "lanemask_ge lanemask_gt")
_home("lang.pipeline", "pipeline memcpy_async")
_home("lang.mma", "ldmatrix stmatrix")
_home("lang.atomics_ordered", "volatile_load volatile_store")
_home("lang.cachehints", "ldcg ldca ldcs ldlu ldcv stwb stcg stcs stwt")
_home("lang.printf", "printf")
_home("lang.heap", "malloc free trap")
_home("lang.devmem", "memcpy")
_home("runtime.limits", "set_limit get_limit")
_home("runtime.control", "set_cache_config get_cache_config reset_device")
_home("lang.loops", "unroll")
_home("lang.structs", "struct")
_home("lang.vectors", "dot length normalize cross")
_home("lang.half", "bfloat16 to_bfloat16 from_bfloat16")
_home("lang.float8", "float8_e4m3 float8_e5m2")      # ml_dtypes', imported at first use
_home("lang.inline_asm", "asm")
_home("lang.warpspec", "setmaxnreg elect_one barrier_sync barrier_arrive griddepcontrol")
_home("lang.graphs", "graph_set_condition graph_launch")
_home("devstreams", "stream_fire_and_forget stream_tail_launch")


def _tables():
    """The names made from tables: cuda_fp16/cuda_bf16's (simt.hadd, ...) and the vector
    types with their makers (simt.float4, simt.make_float4, ... guide B.3.1)."""
    from .lang.half import ENTRIES
    from .lang.vectors import MAKERS, TYPES
    return {**ENTRIES, **TYPES, **{m.op: m for m in MAKERS.values()}}


def __getattr__(name):
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(_importlib.import_module(f"{__name__}.{home[0]}"), home[1])
    elif name == "__all__":
        value = _public()
    elif _sys.modules.get(f"{__name__}.{name}") is not None:
        return _sys.modules[f"{__name__}.{name}"]    # a subpackage being imported (simt.ir)
    else:
        try:
            return _importlib.import_module(f"{__name__}.{name}")     # simt.runtime ...
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
        tables = {} if name.startswith("_") else _tables()     # no table name starts so
        if name not in tables:
            raise AttributeError(f"module 'simt' has no attribute '{name}'") from None
        value = tables[name]
    globals()[name] = value            # found once
    return value


def _public():
    """`from simt import *`: the kernel language and runtime names; not simt's subpackages,
    and not `math`, which would shadow the standard library's module of that name."""
    names = {n for n in globals() if not n.startswith("_")}
    names |= set(_HOMES) | set(_tables())
    names -= {"math", "errors", "version", "logs", "config", "lazy"}
    return sorted(n for n in names if n in ("cg", "wmma", "mma", "wgmma", "tma") or _not_module(n))


def _not_module(name):
    try:
        value = __getattr__(name) if name not in globals() else globals()[name]
    except ImportError:                  # an optional dependency's name (simt.float8_e4m3)
        return False
    return type(value).__name__ != "module"


def __dir__():
    return sorted(set(globals()) | set(_HOMES) | set(_tables()))
