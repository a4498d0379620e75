"""What kernel code may name: registry entries with docs, typing rules and
lowerings (see registry.py)."""
from .registry import REGISTRY, Intrinsic, Namespace, Static
from . import python
from .indices import threadIdx, blockIdx, blockDim, gridDim, warpSize, grid, gridsize, arch
from .memory import shared, local, const
from .sync import (syncthreads, syncthreads_count, syncthreads_and, syncthreads_or,
                   threadfence, threadfence_block, threadfence_system, fence_proxy_async)
from .atomics import atomic
from .atomics_ordered import volatile_load, volatile_store
from .mathlib import math_ns as math
from .intrinsics_fp import BITCASTS as _BITCASTS
(float_as_int, int_as_float, float_as_uint, uint_as_float, double_as_longlong, longlong_as_double,
 double2hiint, double2loint, hiloint2double) = _BITCASTS
from .cachehints import ldg, ldcg, ldca, ldcs, ldlu, ldcv, stwb, stcg, stcs, stwt
from .printf import printf
from .heap import malloc, free, trap
from . import devmem
from .linking import declare_device
from .loops import unroll
from .timers import clock, clock64, globaltimer, nanosleep
from .warp import (all_sync, any_sync, ballot_sync, activemask, match_any_sync, match_all_sync,
                   reduce_add_sync, reduce_min_sync, reduce_max_sync, reduce_and_sync,
                   reduce_or_sync, reduce_xor_sync, shfl_sync, shfl_up_sync, shfl_down_sync,
                   shfl_xor_sync, syncwarp, laneid, uni_sync, lanemask_lt, lanemask_le,
                   lanemask_eq, lanemask_ge, lanemask_gt)
from . import cg
from . import wmma
from . import mma
from .mma import ldmatrix, stmatrix
from . import wgmma
from . import tma
from .pipeline import pipeline, memcpy_async
from . import barrier as _barrier  # noqa: F401  (simt.shared.barrier)
from . import vectors
from .inline_asm import asm
from .warpspec import (setmaxnreg, elect_one, barrier_sync, barrier_arrive,
                       griddepcontrol)
from .graphs import graph_set_condition, graph_launch
from . import half
from . import float8  # noqa: F401  (simt.float8_e4m3, simt.float8_e5m2: simt/__init__.py)
