"""simt: the CUDA programming model in Python.

Kernels are Python functions compiled for NVIDIA GPUs and for the CPU, launched
over a grid of thread blocks: ``kernel[blocks, threads](args)``.
"""
from .version import __version__

from .errors import (CudaError, CompileError, InvalidConfiguration, LaunchError,
                             IllegalAddressError, DeviceAssertError, MisalignedAddressError,
                             RaceConditionError, BarrierDivergenceError, UninitializedReadError,
                             OutOfMemoryError, NotSupportedError, ContextUnusableError)
from .runtime.kernel import kernel, device, Kernel, DeviceFunction
from .runtime.launch import dim3
from .runtime.devices import (devices, get_device, set_device, use_device, synchronize, Device,
                              set_device_flags)
from .runtime.backend import DeviceProperties
from .runtime.streams import Stream, Event, default_stream
from .runtime.graphs import Graph
from .runtime.pools import MemoryPool
from .runtime.memory import pitched_array, copy_2d, copy_3d, host_register, host_unregister, memset
from .runtime.arrays import (DeviceArray, to_device, device_array, empty, zeros,
                             device_array_like, empty_like, zeros_like, asarray, from_dlpack, pinned_array, mapped_array,
                             managed_array, mem_get_info)
from .lang import (threadIdx, blockIdx, blockDim, gridDim, warpSize, grid, gridsize, shared,
                   local, const, Constant, Global, syncthreads, syncthreads_count,
                   syncthreads_and, syncthreads_or, threadfence, threadfence_block,
                   threadfence_system, atomic, math, float_as_int, int_as_float, float_as_uint,
                   uint_as_float, double_as_longlong, longlong_as_double, ldg, clock, clock64,
                   globaltimer, nanosleep, double2hiint, double2loint, hiloint2double)
from .runtime.textures import CudaArray, Texture, Surface
from .runtime.modules import Module, SourceModule, RawKernel
from .runtime.peer import can_access_peer, enable_peer_access
from .runtime.ipc import open_ipc_handle
from .runtime.vmm import VirtualMemory
from .lang.textures import (tex1D, tex2D, tex3D, tex1DLayered, tex2DLayered, tex2Dgather,
                            surf1Dread, surf2Dread, surf3Dread, surf1Dwrite, surf2Dwrite,
                            surf3Dwrite)
from .lang.warp import (all_sync, any_sync, ballot_sync, activemask, match_any_sync,
                        match_all_sync, reduce_add_sync, reduce_min_sync, reduce_max_sync,
                        reduce_and_sync, reduce_or_sync, reduce_xor_sync, shfl_sync,
                        shfl_up_sync, shfl_down_sync, shfl_xor_sync, syncwarp, laneid)
from .lang import cg
from .lang import wmma
from .lang.pipeline import pipeline, memcpy_async
from .lang.atomics_ordered import volatile_load, volatile_store
from .lang.cachehints import ldcg, ldca, ldcs, ldlu, ldcv, stwb, stcg, stcs, stwt
from .lang.printf import printf
from .lang.heap import malloc, free, trap
from .runtime.limits import set_limit, get_limit
from .lang.loops import unroll
from .lang.warp import uni_sync
from .lang.vectors import TYPES as _VECTOR_TYPES, MAKERS as _VECTOR_MAKERS, dot, length, \
    normalize, cross
from .lang.half import ENTRIES as _HALF_ENTRIES, bfloat16, to_bfloat16, from_bfloat16

globals().update(_HALF_ENTRIES)                       # cuda_fp16 / cuda_bf16 names
globals().update(_VECTOR_TYPES)                       # simt.float4, simt.int2, ... (guide B.3.1)
globals().update({m.op: m for m in _VECTOR_MAKERS.values()})     # simt.make_float4, ...

from . import logs as _logs

_logs.configure()

# `from simt import *` gives the kernel language and runtime names: not simt's subpackages,
# and not `math`, which would shadow the standard library's module of that name.
__all__ = sorted(_name for _name, _value in globals().items()
                 if not _name.startswith("_") and _name != "math"
                 and (_name in ("cg", "wmma") or type(_value).__name__ != "module"))
