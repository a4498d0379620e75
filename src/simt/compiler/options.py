"""The options a kernel is compiled with, as one frozen value.

A compile reads its options only from a ``CompileOptions``; each kind of device has one
default value of it (its Backend's ``compile_options``), and ``key()`` is what both
caches (in memory and on disk) hash, so an option cannot change the code without
changing the key.
"""
import dataclasses
from typing import NamedTuple, Optional

from ..errors import NotSupportedError
from . import kernel_options


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """``boundscheck``: check every index against its dimension (an out-of-bounds
    access raises IllegalAddressError): on by default on the CPU device, off on GPUs.
    ``checks``: checked mode (docs/finding-bugs.md): bounds, races, barrier divergence,
    uninitialized reads; CPU device only, off by default.
    ``narrowing``: report an implicit integer conversion to a narrower type that changes
    the value (an int64 stored into an int32 element that does not fit: UBSan's
    implicit-conversion check) as a NarrowingConversionError; off by default, since CUDA
    defines the wrap. Explicit conversions (``np.int32(v)``) are never reported.
    ``fastmath``: nvcc's --use_fast_math (docs/math.md says what it changes).
    ``launch_bounds``, ``maxnreg``, ``lineinfo``: CUDA's ``__launch_bounds__``,
    ``-maxrregcount`` and ``-lineinfo`` (compiler/kernel_options.py checks their values;
    docs/kernel-options.md says what each does on each device).
    ``seed``: the sim device's order of threads (0: thread order; SIMT_SIM_SEED); None on
    the devices that have no such choice.
    ``cluster_dims``: CUDA's ``__cluster_dims__``, the kernel's cluster shape (x, y, z)
    fixed at compile time (PTX ``.reqnctapercluster``): its launches are in clusters of
    that shape without naming one (docs/clusters.md).
    ``ftz``, ``prec_div``, ``prec_sqrt``, ``fmad``: nvcc's -ftz, -prec-div, -prec-sqrt and
    -fmad (docs/math.md): None follows ``fastmath`` (which means ftz, approximate float32
    division and square root, contraction), True or False overrides it; ``math()`` gives
    the values in force.
    ``noalias``: the kernel's array parameters do not overlap (``__restrict__``, docs/
    kernel-options.md).
    ``arch``: the GPU target ('sm_80') the kernel is compiled for instead of the device's
    (``simt.arch()`` folds to it); None: the device's.
    ``link``: files of device code the kernel is linked with on GPUs (lang/linking.py;
    read when the kernel is declared, so the key holds their contents).
    ``block``: not a user's option: the block shape (x, y, z) a CPU kernel with barriers is
    made for, its thread loops' extents as constants (the CPU device asks for it per launch
    configuration: Kernel.binary_for); None for code that reads the shape at launch.
    ``wraparound``: not a user's option either: numba's index rule, a negative index
    counting from the end (kernels made by ``cuda.jit``: compiler/wraparound.py)."""

    boundscheck: bool = False
    checks: bool = False
    fastmath: bool = False
    launch_bounds: Optional[tuple] = None     # (max_threads, min_blocks); min_blocks 0: none
    maxnreg: Optional[int] = None
    lineinfo: bool = False
    seed: "int | None" = None
    link: tuple = ()                          # lang/linking.LinkFile: device code to link
    cluster_dims: Optional[tuple] = None      # (x, y, z): blocks per cluster, compile time
    ftz: Optional[bool] = None
    prec_div: Optional[bool] = None
    prec_sqrt: Optional[bool] = None
    fmad: Optional[bool] = None
    noalias: bool = False
    narrowing: bool = False
    arch: Optional[str] = None                # 'sm_80': the GPU target, else the device's
    block: "tuple | None" = None
    wraparound: bool = False

    def key(self):
        """The options as a string for cache keys: every field, by name (made once; an
        unset ``block``, ``cluster_dims``, ``noalias`` or math flag is left out, so code
        without them keeps the keys it had)."""
        key = self.__dict__.get("_key")
        if key is None:
            key = ";".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                           if _in_key(f.name, getattr(self, f.name)))
            object.__setattr__(self, "_key", key)      # frozen: fields only; this is a memo
        return key

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def math(self):
        """The math flags in force (MathFlags): ``fastmath`` sets ftz, prec_div=False and
        prec_sqrt=False, as nvcc's --use_fast_math does; a flag given overrides it."""
        fast = self.fastmath
        return MathFlags(ftz=fast if self.ftz is None else self.ftz,
                         prec_div=not fast if self.prec_div is None else self.prec_div,
                         prec_sqrt=not fast if self.prec_sqrt is None else self.prec_sqrt,
                         fmad=True if self.fmad is None else self.fmad)


class MathFlags(NamedTuple):
    """nvcc's four math flags, as a compile uses them."""
    ftz: bool           # float32 denormals flush to zero
    prec_div: bool      # float32 division correctly rounded (else approximate)
    prec_sqrt: bool     # float32 square root correctly rounded (else approximate)
    fmad: bool          # a*b+c may become one fma


_UNSET_LEFT_OUT = ("block", "link", "cluster_dims", "noalias", "wraparound", "narrowing")   # when false
_NONE_LEFT_OUT = ("ftz", "prec_div", "prec_sqrt", "fmad", "arch")   # when None


def _in_key(name, value):
    if name in _UNSET_LEFT_OUT:
        return bool(value)
    return value is not None or name not in _NONE_LEFT_OUT

FIELDS = tuple(f.name for f in dataclasses.fields(CompileOptions)
               if f.name not in ("block", "wraparound"))

# Options ../shared/API.md names (nvcc's __launch_bounds__, -maxrregcount, --use_fast_math,
# -lineinfo) that are not built yet: asking for one is a NotSupportedError, not a TypeError.
NOT_BUILT = ()


def check_names(options, what):
    """The options with their values checked and normalized (kernel_options.py):
    NotSupportedError for an option not built yet; TypeError naming the valid options
    when ``options`` has others."""
    planned = sorted(set(options) & set(NOT_BUILT))
    if planned:
        raise NotSupportedError(f"{what}: the option {', '.join(planned)} is not available "
                                f"yet in simt; its options: {', '.join(FIELDS)}")
    unknown = sorted(set(options) - set(FIELDS))
    if unknown:
        raise TypeError(f"{what} has no option {', '.join(unknown)}; its options: "
                        f"{', '.join(FIELDS)}")
    return kernel_options.checked(options, what)


def choose(defaults, device_options, kernel_options):
    """The options of one compile: the device kind's ``defaults``, then the device's
    settings (``set_device('cpu', boundscheck=False)``), then the kernel's own."""
    chosen = {name: value for name, value in device_options.items() if name in FIELDS}
    chosen.update(kernel_options)
    if defaults.seed is None and chosen.get("seed") is not None:
        raise NotSupportedError("seed= chooses the order of threads on the sim device only; "
                                "run the kernel under simt.use_device('sim', seed=N)")
    return defaults.replace(**chosen)
