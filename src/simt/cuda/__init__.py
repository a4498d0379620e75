"""numba-cuda's names over simt: ``from simt import cuda``, and a numba-cuda program runs
on simt's devices, the CPU included. Kernel-side names are simt's own objects; the host
side differs where numba's does: launches are ``kernel[grid, block, stream, shared]``,
and the arrays handed out here copy as numba's do (``d.copy_to_device(src)`` copies src
INTO d). docs/coming-from-numba.md has the table of names and the differences.

The parts: language.py (kernel-side names), dispatcher.py (``cuda.jit``), arrays.py
(numba-flavoured device arrays), host.py (streams, events, devices), random.py
(``cuda.random``: numba's xoroshiro128+ generators)."""
from ..lang import (threadIdx, blockIdx, blockDim, gridDim, grid, gridsize, shared, local,  # noqa: F401
                    const, syncthreads, syncthreads_count, syncthreads_and, syncthreads_or,
                    threadfence, threadfence_block, threadfence_system, cg)
from ..lang.cachehints import ldcg, ldca, ldcs, ldlu, ldcv, stwb, stcg, stcs, stwt  # noqa: F401
from ..lang.timers import nanosleep  # noqa: F401
from ..lang.warp import (all_sync, any_sync, ballot_sync, activemask, match_any_sync,  # noqa: F401
                         match_all_sync, shfl_sync, shfl_up_sync, shfl_down_sync,
                         shfl_xor_sync, syncwarp, lanemask_lt)
from .language import (warpsize, laneid, selp, atomic, fp16, libdevice, fma, cbrt, brev,  # noqa: F401
                       clz, ffs, popc, float16, float32, float64, int8, int16, int32, int64,
                       uint8, uint16, uint32, uint64, complex64, complex128, boolean)
from .dispatcher import (jit, Dispatcher, compile_ptx,  # noqa: F401
                         compile_ptx_for_current_device)
from .arrays import (DeviceNDArray, numba_array, to_device, device_array,  # noqa: F401
                     device_array_like, pinned_array, mapped_array, managed_array,
                     pinned_array_like, mapped_array_like, managed_array_like, pinned, mapped,
                     as_cuda_array, from_cuda_array_interface, is_cuda_array, devicearray)
from .host import (Stream, Event, stream, default_stream, legacy_default_stream,  # noqa: F401
                   per_thread_default_stream, external_stream, event, event_elapsed_time,
                   synchronize, list_devices, gpus, get_current_device, current_context,
                   select_device, close, is_available, detect, CudaSupportError,
                   profile_start, profile_stop, profiling)
from . import random  # noqa: F401,E402
from .reduce import Reduce, reduce  # noqa: F401,E402
