"""What type checkers see of ``import simt``: written by tools/gen_stub.py from
simt/__init__.py's tables (run it after adding a public name; tests/test_typing.py checks).

Host names come from their home modules. Kernel-language names are typed as kernel code
reads them: ``threadIdx.x`` is an int; an intrinsic is a function whose result the
compiler types (Any here)."""
from typing import Any

import numpy as np

from . import errors as errors, gl as gl, version as version
from .version import __version__ as __version__
from .lang.registry import Intrinsic as _Intrinsic
from .lang.vectors import VectorValue as _VectorValue


class _Dim3:
    """threadIdx, blockIdx, blockDim, gridDim as kernel code reads them."""
    x: int
    y: int
    z: int


class _Vector(_VectorValue):
    """A vector type (simt.float4, ...): its components, its arrays' dtype, and in
    kernels the helper_math arithmetic."""
    dtype: np.dtype[Any]
    x: Any
    y: Any
    z: Any
    w: Any
    def __add__(self, other: Any) -> Any: ...
    def __radd__(self, other: Any) -> Any: ...
    def __sub__(self, other: Any) -> Any: ...
    def __rsub__(self, other: Any) -> Any: ...
    def __mul__(self, other: Any) -> Any: ...
    def __rmul__(self, other: Any) -> Any: ...
    def __truediv__(self, other: Any) -> Any: ...
    def __rtruediv__(self, other: Any) -> Any: ...
    def __neg__(self) -> Any: ...

from .errors import (BarrierDivergenceError as BarrierDivergenceError, CompileError as CompileError,
                     CompileWarning as CompileWarning, ContextUnusableError as ContextUnusableError,
                     CudaError as CudaError, DeviceAssertError as DeviceAssertError,
                     IllegalAddressError as IllegalAddressError,
                     InvalidConfiguration as InvalidConfiguration, LaunchError as LaunchError,
                     MisalignedAddressError as MisalignedAddressError,
                     NarrowingConversionError as NarrowingConversionError,
                     NotSupportedError as NotSupportedError, OutOfMemoryError as OutOfMemoryError,
                     RaceConditionError as RaceConditionError,
                     UninitializedReadError as UninitializedReadError)

from .runtime.kernel import (kernel as kernel, device as device, Kernel as Kernel,
                             DeviceFunction as DeviceFunction)
from .runtime.launch import dim3 as dim3
from .runtime.devices import (devices as devices, get_device as get_device,
                              set_device as set_device, use_device as use_device,
                              synchronize as synchronize, Device as Device,
                              set_device_flags as set_device_flags)
from .runtime.backend import DeviceProperties as DeviceProperties
from .runtime.streams import (Stream as Stream, Event as Event, default_stream as default_stream,
                              stream_priority_range as stream_priority_range)
from .runtime.graphs import Graph as Graph
from .runtime.pools import MemoryPool as MemoryPool
from .runtime.memory import (pitched_array as pitched_array, copy_2d as copy_2d, copy_3d as copy_3d,
                             host_register as host_register, host_unregister as host_unregister,
                             memset as memset)
from .runtime.arrays import (DeviceArray as DeviceArray, device_array as device_array,
                             empty as empty, zeros as zeros, device_array_like as device_array_like,
                             empty_like as empty_like, zeros_like as zeros_like,
                             mem_get_info as mem_get_info)
from .runtime.interop import (asarray as asarray, from_dlpack as from_dlpack,
                              to_device as to_device)
from .runtime.hostarrays import (pinned_array as pinned_array, mapped_array as mapped_array,
                                 managed_array as managed_array)
from .runtime.symbols import (Constant as Constant, Global as Global, Managed as Managed)
from .runtime.pointers import (pointer_attributes as pointer_attributes,
                               PointerAttributes as PointerAttributes)
from .runtime.uva import copy as copy
from .lang import (grid as grid, gridsize as gridsize, arch as arch, syncthreads as syncthreads,
                   syncthreads_count as syncthreads_count, syncthreads_and as syncthreads_and,
                   syncthreads_or as syncthreads_or, threadfence as threadfence,
                   threadfence_block as threadfence_block, threadfence_system as threadfence_system,
                   fence_proxy_async as fence_proxy_async, float_as_int as float_as_int,
                   int_as_float as int_as_float, float_as_uint as float_as_uint,
                   uint_as_float as uint_as_float, double_as_longlong as double_as_longlong,
                   longlong_as_double as longlong_as_double, ldg as ldg, clock as clock,
                   clock64 as clock64, globaltimer as globaltimer, nanosleep as nanosleep,
                   double2hiint as double2hiint, double2loint as double2loint,
                   hiloint2double as hiloint2double, cg as cg, wmma as wmma, mma as mma,
                   wgmma as wgmma, tma as tma, declare_device as declare_device)
from .runtime.textures import (CudaArray as CudaArray, MipmappedArray as MipmappedArray,
                               Texture as Texture, Surface as Surface)
from .runtime.tensormaps import (tensor_map as tensor_map, TensorMap as TensorMap)
from .runtime.modules import (Module as Module, SourceModule as SourceModule,
                              RawKernel as RawKernel)
from .runtime.peer import (can_access_peer as can_access_peer,
                           enable_peer_access as enable_peer_access)
from .runtime.ipc import open_ipc_handle as open_ipc_handle
from .runtime.vmm import VirtualMemory as VirtualMemory
from .lang.textures import (tex1D as tex1D, tex2D as tex2D, tex3D as tex3D,
                            tex1DLayered as tex1DLayered, tex2DLayered as tex2DLayered,
                            tex2Dgather as tex2Dgather, surf1Dread as surf1Dread,
                            surf2Dread as surf2Dread, surf3Dread as surf3Dread,
                            surf1Dwrite as surf1Dwrite, surf2Dwrite as surf2Dwrite,
                            surf3Dwrite as surf3Dwrite, tex1DLod as tex1DLod, tex2DLod as tex2DLod,
                            tex3DLod as tex3DLod, tex2DGrad as tex2DGrad, texCubemap as texCubemap,
                            texCubemapLayered as texCubemapLayered,
                            surf2DLayeredread as surf2DLayeredread,
                            surf2DLayeredwrite as surf2DLayeredwrite,
                            surfCubemapread as surfCubemapread,
                            surfCubemapwrite as surfCubemapwrite,
                            surfCubemapLayeredread as surfCubemapLayeredread,
                            surfCubemapLayeredwrite as surfCubemapLayeredwrite)
from .lang.warp import (all_sync as all_sync, any_sync as any_sync, ballot_sync as ballot_sync,
                        activemask as activemask, match_any_sync as match_any_sync,
                        match_all_sync as match_all_sync, reduce_add_sync as reduce_add_sync,
                        reduce_min_sync as reduce_min_sync, reduce_max_sync as reduce_max_sync,
                        reduce_and_sync as reduce_and_sync, reduce_or_sync as reduce_or_sync,
                        reduce_xor_sync as reduce_xor_sync, shfl_sync as shfl_sync,
                        shfl_up_sync as shfl_up_sync, shfl_down_sync as shfl_down_sync,
                        shfl_xor_sync as shfl_xor_sync, syncwarp as syncwarp, laneid as laneid,
                        uni_sync as uni_sync, lanemask_lt as lanemask_lt,
                        lanemask_le as lanemask_le, lanemask_eq as lanemask_eq,
                        lanemask_ge as lanemask_ge, lanemask_gt as lanemask_gt)
from .lang.pipeline import (pipeline as pipeline, memcpy_async as memcpy_async)
from .lang.mma import (ldmatrix as ldmatrix, stmatrix as stmatrix)
from .lang.atomics_ordered import (volatile_load as volatile_load, volatile_store as volatile_store)
from .lang.cachehints import (ldcg as ldcg, ldca as ldca, ldcs as ldcs, ldlu as ldlu, ldcv as ldcv,
                              stwb as stwb, stcg as stcg, stcs as stcs, stwt as stwt)
from .lang.printf import printf as printf
from .lang.heap import (malloc as malloc, free as free, trap as trap)
from .lang.devmem import memcpy as memcpy
from .runtime.limits import (set_limit as set_limit, get_limit as get_limit)
from .runtime.control import (set_cache_config as set_cache_config,
                              get_cache_config as get_cache_config, reset_device as reset_device)
from .lang.loops import unroll as unroll
from .lang.structs import struct as struct
from .lang.vectors import (dot as dot, length as length, normalize as normalize, cross as cross)
from .lang.half import (to_bfloat16 as to_bfloat16, from_bfloat16 as from_bfloat16)
from .lang.inline_asm import asm as asm
from .lang.warpspec import (setmaxnreg as setmaxnreg, elect_one as elect_one,
                            barrier_sync as barrier_sync, barrier_arrive as barrier_arrive)
from .lang.graphs import (graph_set_condition as graph_set_condition, graph_launch as graph_launch)
from .devstreams import (stream_fire_and_forget as stream_fire_and_forget,
                         stream_tail_launch as stream_tail_launch)


class _Shared:
    """Shared memory: one array per block, visible to all its threads."""
    array: _Intrinsic
    barrier: _Intrinsic
    dynamic: _Intrinsic


class _Local:
    """Per-thread local arrays."""
    array: _Intrinsic


class _Const:
    """Constant memory baked into the kernel."""
    array_like: _Intrinsic


class _Atomic:
    """Atomic functions (guide B.14) and cuda::atomic_ref's ordered loads and stores."""
    add: _Intrinsic
    and_: _Intrinsic
    cas: _Intrinsic
    dec: _Intrinsic
    exch: _Intrinsic
    inc: _Intrinsic
    load: _Intrinsic
    max: _Intrinsic
    min: _Intrinsic
    or_: _Intrinsic
    store: _Intrinsic
    sub: _Intrinsic
    xor: _Intrinsic


class _Math:
    """The CUDA math library and intrinsics (docs/math.md)."""
    acos: _Intrinsic
    acosh: _Intrinsic
    asin: _Intrinsic
    asinh: _Intrinsic
    atan: _Intrinsic
    atan2: _Intrinsic
    atanh: _Intrinsic
    brev: _Intrinsic
    brevll: _Intrinsic
    byte_perm: _Intrinsic
    cbrt: _Intrinsic
    ceil: _Intrinsic
    clz: _Intrinsic
    clzll: _Intrinsic
    copysign: _Intrinsic
    cos: _Intrinsic
    cosh: _Intrinsic
    cospi: _Intrinsic
    cyl_bessel_i0: _Intrinsic
    cyl_bessel_i1: _Intrinsic
    dadd_rd: _Intrinsic
    dadd_rn: _Intrinsic
    dadd_ru: _Intrinsic
    dadd_rz: _Intrinsic
    ddiv_rd: _Intrinsic
    ddiv_rn: _Intrinsic
    ddiv_ru: _Intrinsic
    ddiv_rz: _Intrinsic
    dmul_rd: _Intrinsic
    dmul_rn: _Intrinsic
    dmul_ru: _Intrinsic
    dmul_rz: _Intrinsic
    double2float_rd: _Intrinsic
    double2float_rn: _Intrinsic
    double2float_ru: _Intrinsic
    double2float_rz: _Intrinsic
    double2int_rd: _Intrinsic
    double2int_rn: _Intrinsic
    double2int_ru: _Intrinsic
    double2int_rz: _Intrinsic
    double2ll_rd: _Intrinsic
    double2ll_rn: _Intrinsic
    double2ll_ru: _Intrinsic
    double2ll_rz: _Intrinsic
    double2uint_rd: _Intrinsic
    double2uint_rn: _Intrinsic
    double2uint_ru: _Intrinsic
    double2uint_rz: _Intrinsic
    double2ull_rd: _Intrinsic
    double2ull_rn: _Intrinsic
    double2ull_ru: _Intrinsic
    double2ull_rz: _Intrinsic
    dp2a_hi: _Intrinsic
    dp2a_lo: _Intrinsic
    dp4a: _Intrinsic
    drcp_rd: _Intrinsic
    drcp_rn: _Intrinsic
    drcp_ru: _Intrinsic
    drcp_rz: _Intrinsic
    dsqrt_rd: _Intrinsic
    dsqrt_rn: _Intrinsic
    dsqrt_ru: _Intrinsic
    dsqrt_rz: _Intrinsic
    dsub_rd: _Intrinsic
    dsub_rn: _Intrinsic
    dsub_ru: _Intrinsic
    dsub_rz: _Intrinsic
    erf: _Intrinsic
    erfc: _Intrinsic
    erfcinv: _Intrinsic
    erfcx: _Intrinsic
    erfinv: _Intrinsic
    exp: _Intrinsic
    exp10: _Intrinsic
    exp2: _Intrinsic
    expm1: _Intrinsic
    fabs: _Intrinsic
    fadd_rd: _Intrinsic
    fadd_rn: _Intrinsic
    fadd_ru: _Intrinsic
    fadd_rz: _Intrinsic
    fast_cos: _Intrinsic
    fast_exp: _Intrinsic
    fast_exp10: _Intrinsic
    fast_log: _Intrinsic
    fast_log10: _Intrinsic
    fast_log2: _Intrinsic
    fast_pow: _Intrinsic
    fast_sin: _Intrinsic
    fast_sincos: _Intrinsic
    fast_tan: _Intrinsic
    fdim: _Intrinsic
    fdiv_rd: _Intrinsic
    fdiv_rn: _Intrinsic
    fdiv_ru: _Intrinsic
    fdiv_rz: _Intrinsic
    fdividef: _Intrinsic
    ffs: _Intrinsic
    ffsll: _Intrinsic
    float2int_rd: _Intrinsic
    float2int_rn: _Intrinsic
    float2int_ru: _Intrinsic
    float2int_rz: _Intrinsic
    float2ll_rd: _Intrinsic
    float2ll_rn: _Intrinsic
    float2ll_ru: _Intrinsic
    float2ll_rz: _Intrinsic
    float2uint_rd: _Intrinsic
    float2uint_rn: _Intrinsic
    float2uint_ru: _Intrinsic
    float2uint_rz: _Intrinsic
    float2ull_rd: _Intrinsic
    float2ull_rn: _Intrinsic
    float2ull_ru: _Intrinsic
    float2ull_rz: _Intrinsic
    floor: _Intrinsic
    fma: _Intrinsic
    fma_rd: _Intrinsic
    fma_rn: _Intrinsic
    fma_ru: _Intrinsic
    fma_rz: _Intrinsic
    fmaf_rd: _Intrinsic
    fmaf_rn: _Intrinsic
    fmaf_ru: _Intrinsic
    fmaf_rz: _Intrinsic
    fmax: _Intrinsic
    fmin: _Intrinsic
    fmod: _Intrinsic
    fmul_rd: _Intrinsic
    fmul_rn: _Intrinsic
    fmul_ru: _Intrinsic
    fmul_rz: _Intrinsic
    fns: _Intrinsic
    frcp_rd: _Intrinsic
    frcp_rn: _Intrinsic
    frcp_ru: _Intrinsic
    frcp_rz: _Intrinsic
    frexp: _Intrinsic
    frsqrt_rn: _Intrinsic
    fsqrt_rd: _Intrinsic
    fsqrt_rn: _Intrinsic
    fsqrt_ru: _Intrinsic
    fsqrt_rz: _Intrinsic
    fsub_rd: _Intrinsic
    fsub_rn: _Intrinsic
    fsub_ru: _Intrinsic
    fsub_rz: _Intrinsic
    funnelshift_l: _Intrinsic
    funnelshift_lc: _Intrinsic
    funnelshift_r: _Intrinsic
    funnelshift_rc: _Intrinsic
    hadd: _Intrinsic
    hypot: _Intrinsic
    ilogb: _Intrinsic
    int2double_rn: _Intrinsic
    int2float_rd: _Intrinsic
    int2float_rn: _Intrinsic
    int2float_ru: _Intrinsic
    int2float_rz: _Intrinsic
    isfinite: _Intrinsic
    isinf: _Intrinsic
    isnan: _Intrinsic
    j0: _Intrinsic
    j1: _Intrinsic
    jn: _Intrinsic
    ldexp: _Intrinsic
    lgamma: _Intrinsic
    ll2double_rd: _Intrinsic
    ll2double_rn: _Intrinsic
    ll2double_ru: _Intrinsic
    ll2double_rz: _Intrinsic
    ll2float_rd: _Intrinsic
    ll2float_rn: _Intrinsic
    ll2float_ru: _Intrinsic
    ll2float_rz: _Intrinsic
    llrint: _Intrinsic
    llround: _Intrinsic
    log: _Intrinsic
    log10: _Intrinsic
    log1p: _Intrinsic
    log2: _Intrinsic
    logb: _Intrinsic
    lrint: _Intrinsic
    lround: _Intrinsic
    modf: _Intrinsic
    mul24: _Intrinsic
    mul64hi: _Intrinsic
    mulhi: _Intrinsic
    nan: _Intrinsic
    nanf: _Intrinsic
    nearbyint: _Intrinsic
    nextafter: _Intrinsic
    norm3d: _Intrinsic
    norm4d: _Intrinsic
    normcdf: _Intrinsic
    normcdfinv: _Intrinsic
    popc: _Intrinsic
    popcll: _Intrinsic
    pow: _Intrinsic
    rcbrt: _Intrinsic
    remainder: _Intrinsic
    remquo: _Intrinsic
    rhadd: _Intrinsic
    rhypot: _Intrinsic
    rint: _Intrinsic
    rnorm3d: _Intrinsic
    rnorm4d: _Intrinsic
    round: _Intrinsic
    rsqrt: _Intrinsic
    sad: _Intrinsic
    saturatef: _Intrinsic
    scalbln: _Intrinsic
    scalbn: _Intrinsic
    signbit: _Intrinsic
    sin: _Intrinsic
    sincos: _Intrinsic
    sincospi: _Intrinsic
    sinh: _Intrinsic
    sinpi: _Intrinsic
    sqrt: _Intrinsic
    tan: _Intrinsic
    tanh: _Intrinsic
    tgamma: _Intrinsic
    trunc: _Intrinsic
    uhadd: _Intrinsic
    uint2double_rn: _Intrinsic
    uint2float_rd: _Intrinsic
    uint2float_rn: _Intrinsic
    uint2float_ru: _Intrinsic
    uint2float_rz: _Intrinsic
    ull2double_rd: _Intrinsic
    ull2double_rn: _Intrinsic
    ull2double_ru: _Intrinsic
    ull2double_rz: _Intrinsic
    ull2float_rd: _Intrinsic
    ull2float_rn: _Intrinsic
    ull2float_ru: _Intrinsic
    ull2float_rz: _Intrinsic
    umul24: _Intrinsic
    umul64hi: _Intrinsic
    umulhi: _Intrinsic
    urhadd: _Intrinsic
    usad: _Intrinsic
    vabsdiff2: _Intrinsic
    vabsdiff4: _Intrinsic
    vadd2: _Intrinsic
    vadd4: _Intrinsic
    vmax2: _Intrinsic
    vmax4: _Intrinsic
    vmin2: _Intrinsic
    vmin4: _Intrinsic
    vsub2: _Intrinsic
    vsub4: _Intrinsic
    y0: _Intrinsic
    y1: _Intrinsic
    yn: _Intrinsic


class _Griddepcontrol:
    """Programmatic dependent launch inside kernels (sm_90)."""
    launch_dependents: _Intrinsic
    wait: _Intrinsic


# kernel-language values and namespaces
threadIdx: _Dim3
blockIdx: _Dim3
blockDim: _Dim3
gridDim: _Dim3
warpSize: int
shared: _Shared
local: _Local
const: _Const
atomic: _Atomic
math: _Math
bfloat16: type[Any]   # ml_dtypes' where installed
float8_e4m3: type[Any]   # ml_dtypes' where installed
float8_e5m2: type[Any]   # ml_dtypes' where installed
griddepcontrol: _Griddepcontrol

# made from tables: the vector types, their make_* and cuda_fp16/cuda_bf16's
float2half: _Intrinsic
float2half_rn: _Intrinsic
double2half: _Intrinsic
half2float: _Intrinsic
float2bfloat16: _Intrinsic
float2bfloat16_rn: _Intrinsic
double2bfloat16: _Intrinsic
bfloat162float: _Intrinsic
float2half2_rn: _Intrinsic
floats2half2_rn: _Intrinsic
float22half2_rn: _Intrinsic
half22float2: _Intrinsic
halves2half2: _Intrinsic
half2half2: _Intrinsic
low2half: _Intrinsic
high2half: _Intrinsic
float2bfloat162_rn: _Intrinsic
floats2bfloat162_rn: _Intrinsic
float22bfloat162_rn: _Intrinsic
bfloat1622float2: _Intrinsic
halves2bfloat162: _Intrinsic
bfloat162bfloat162: _Intrinsic
low2bfloat16: _Intrinsic
high2bfloat16: _Intrinsic
low2float: _Intrinsic
high2float: _Intrinsic
lowhigh2highlow: _Intrinsic
half_as_ushort: _Intrinsic
ushort_as_half: _Intrinsic
half_as_short: _Intrinsic
short_as_half: _Intrinsic
bfloat16_as_ushort: _Intrinsic
ushort_as_bfloat16: _Intrinsic
bfloat16_as_short: _Intrinsic
short_as_bfloat16: _Intrinsic
hadd: _Intrinsic
hadd2: _Intrinsic
hsub: _Intrinsic
hsub2: _Intrinsic
hmul: _Intrinsic
hmul2: _Intrinsic
hdiv: _Intrinsic
h2div: _Intrinsic
hfma: _Intrinsic
hfma2: _Intrinsic
hneg: _Intrinsic
hneg2: _Intrinsic
habs: _Intrinsic
habs2: _Intrinsic
hmax: _Intrinsic
hmin: _Intrinsic
hmax2: _Intrinsic
hmin2: _Intrinsic
hsqrt: _Intrinsic
h2sqrt: _Intrinsic
hrsqrt: _Intrinsic
h2rsqrt: _Intrinsic
hrcp: _Intrinsic
h2rcp: _Intrinsic
hexp: _Intrinsic
h2exp: _Intrinsic
hexp2: _Intrinsic
h2exp2: _Intrinsic
hexp10: _Intrinsic
h2exp10: _Intrinsic
hlog: _Intrinsic
h2log: _Intrinsic
hlog2: _Intrinsic
h2log2: _Intrinsic
hlog10: _Intrinsic
h2log10: _Intrinsic
hsin: _Intrinsic
h2sin: _Intrinsic
hcos: _Intrinsic
h2cos: _Intrinsic
hfloor: _Intrinsic
h2floor: _Intrinsic
hceil: _Intrinsic
h2ceil: _Intrinsic
htrunc: _Intrinsic
h2trunc: _Intrinsic
hrint: _Intrinsic
h2rint: _Intrinsic
hisnan: _Intrinsic
hisinf: _Intrinsic
char1: type[_Vector]
char2: type[_Vector]
char3: type[_Vector]
char4: type[_Vector]
uchar1: type[_Vector]
uchar2: type[_Vector]
uchar3: type[_Vector]
uchar4: type[_Vector]
short1: type[_Vector]
short2: type[_Vector]
short3: type[_Vector]
short4: type[_Vector]
ushort1: type[_Vector]
ushort2: type[_Vector]
ushort3: type[_Vector]
ushort4: type[_Vector]
int1: type[_Vector]
int2: type[_Vector]
int3: type[_Vector]
int4: type[_Vector]
uint1: type[_Vector]
uint2: type[_Vector]
uint3: type[_Vector]
uint4: type[_Vector]
long1: type[_Vector]
longlong1: type[_Vector]
long2: type[_Vector]
longlong2: type[_Vector]
long3: type[_Vector]
longlong3: type[_Vector]
long4: type[_Vector]
longlong4: type[_Vector]
ulong1: type[_Vector]
ulonglong1: type[_Vector]
ulong2: type[_Vector]
ulonglong2: type[_Vector]
ulong3: type[_Vector]
ulonglong3: type[_Vector]
ulong4: type[_Vector]
ulonglong4: type[_Vector]
float1: type[_Vector]
float2: type[_Vector]
float3: type[_Vector]
float4: type[_Vector]
double1: type[_Vector]
double2: type[_Vector]
double3: type[_Vector]
double4: type[_Vector]
half2: type[_Vector]
bfloat162: type[_Vector]
make_char1: _Intrinsic
make_char2: _Intrinsic
make_char3: _Intrinsic
make_char4: _Intrinsic
make_uchar1: _Intrinsic
make_uchar2: _Intrinsic
make_uchar3: _Intrinsic
make_uchar4: _Intrinsic
make_short1: _Intrinsic
make_short2: _Intrinsic
make_short3: _Intrinsic
make_short4: _Intrinsic
make_ushort1: _Intrinsic
make_ushort2: _Intrinsic
make_ushort3: _Intrinsic
make_ushort4: _Intrinsic
make_int1: _Intrinsic
make_int2: _Intrinsic
make_int3: _Intrinsic
make_int4: _Intrinsic
make_uint1: _Intrinsic
make_uint2: _Intrinsic
make_uint3: _Intrinsic
make_uint4: _Intrinsic
make_long1: _Intrinsic
make_longlong1: _Intrinsic
make_long2: _Intrinsic
make_longlong2: _Intrinsic
make_long3: _Intrinsic
make_longlong3: _Intrinsic
make_long4: _Intrinsic
make_longlong4: _Intrinsic
make_ulong1: _Intrinsic
make_ulonglong1: _Intrinsic
make_ulong2: _Intrinsic
make_ulonglong2: _Intrinsic
make_ulong3: _Intrinsic
make_ulonglong3: _Intrinsic
make_ulong4: _Intrinsic
make_ulonglong4: _Intrinsic
make_float1: _Intrinsic
make_float2: _Intrinsic
make_float3: _Intrinsic
make_float4: _Intrinsic
make_double1: _Intrinsic
make_double2: _Intrinsic
make_double3: _Intrinsic
make_double4: _Intrinsic
make_half2: _Intrinsic
make_bfloat162: _Intrinsic
