"""The values of the kernel options CUDA spells as ``__launch_bounds__``, ``-maxrregcount``,
``__cluster_dims__``, ``-lineinfo`` (guide B.32), ``__restrict__``, ``-arch`` and nvcc's math
flags: checked when ``@simt.kernel(...)`` is
applied, so a bad value is an error at the decorator, never a compile that quietly does
something else.

``checked(options, what)`` returns the options normalized: ``launch_bounds`` as the
tuple ``(max_threads, min_blocks)`` (``min_blocks`` 0 when not given) and ``cluster_dims``
as ``(x, y, z)``, so that two spellings of one value are one cache key.
docs/kernel-options.md is the user's page.
"""
import numpy as np

MAX_THREADS = 1024        # CUDA's limit on threads per block, every architecture since 2.0
MAX_REGISTERS = 255       # registers per thread a kernel may use, every architecture since 3.5
MAX_CLUSTER = 8           # blocks in a cluster: CUDA's portable limit


def _integer(value):
    """value as an int when it is a Python or NumPy integer (not a bool), else None."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def launch_bounds(value, what):
    """(max_threads, min_blocks) from ``n``, ``(n,)`` or ``(n, min_blocks)``; None stays None."""
    if value is None:
        return None
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    numbers = [_integer(v) for v in items]
    if not 1 <= len(items) <= 2 or None in numbers:
        raise TypeError(f"{what}: launch_bounds is (max_threads, min_blocks) or max_threads, "
                        f"as ints; got {value!r}")
    max_threads, min_blocks = numbers[0], numbers[1] if len(numbers) == 2 else 0
    if not 1 <= max_threads <= MAX_THREADS:
        raise ValueError(f"{what}: launch_bounds max_threads is {max_threads}; it must be "
                         f"1 to {MAX_THREADS} (threads per block)")
    if len(numbers) == 2 and min_blocks < 1:
        raise ValueError(f"{what}: launch_bounds min_blocks is {min_blocks}; it must be at "
                         "least 1 (blocks per multiprocessor), or leave it out")
    return (max_threads, min_blocks)


def maxnreg(value, what):
    """The register limit per thread: an int from 1 to MAX_REGISTERS, or None."""
    if value is None:
        return None
    n = _integer(value)
    if n is None:
        raise TypeError(f"{what}: maxnreg is an int number of registers per thread; got "
                        f"{value!r}")
    if not 1 <= n <= MAX_REGISTERS:
        raise ValueError(f"{what}: maxnreg is {n}; it must be 1 to {MAX_REGISTERS} "
                         "(registers per thread)")
    return n


def cluster_dims(value, what):
    """A compile-time cluster shape (``__cluster_dims__``) as (x, y, z) from an int or 1 to 3
    ints, of at most MAX_CLUSTER blocks; None stays None."""
    if value is None:
        return None
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    numbers = [_integer(v) for v in items]
    if not 1 <= len(items) <= 3 or None in numbers:
        raise TypeError(f"{what}: cluster_dims is (x, y, z), 1 to 3 ints of blocks; got "
                        f"{value!r}")
    dims = tuple(numbers) + (1,) * (3 - len(numbers))
    if min(dims) < 1:
        raise ValueError(f"{what}: cluster_dims {dims} has a dimension below 1")
    if dims[0] * dims[1] * dims[2] > MAX_CLUSTER:
        raise ValueError(f"{what}: cluster_dims {dims} is a cluster of "
                         f"{dims[0] * dims[1] * dims[2]} blocks, over the portable limit of "
                         f"{MAX_CLUSTER}")
    return dims


def flag(name, unset=False):
    """A checker for an on/off option: True or False only (or None where ``unset``: a math
    flag left to follow fastmath)."""
    def check(value, what):
        if unset and value is None:
            return None
        if not isinstance(value, (bool, np.bool_)):
            more = ", or None to follow fastmath" if unset else ""
            raise TypeError(f"{what}: {name} is True or False{more}; got {value!r}")
        return bool(value)
    return check


ARCH_MAJORS = range(5, 13)    # compute capabilities CUDA 12 and LLVM's NVPTX target both know


def arch(value, what):
    """The GPU target of ``arch=``: 'sm_XY' (or 'sm_XYa', PTX's arch-specific target) from
    that string or a (major, minor) compute capability; None stays None."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and len(value) == 2 and \
            None not in (_integer(v) for v in value):
        major, minor, suffix = int(value[0]), int(value[1]), ""
    else:
        text = value if isinstance(value, str) else ""
        digits = text.removeprefix("sm_")
        suffix = "a" if digits.endswith("a") else ""
        digits = digits.removesuffix("a")
        if not (text.startswith("sm_") and digits.isdigit() and len(digits) in (2, 3)):
            raise TypeError(f"{what}: arch is a GPU target such as 'sm_80' or 'sm_90a', or a "
                            f"compute capability such as (8, 0); got {value!r}")
        major, minor = int(digits[:-1]), int(digits[-1])
    if major not in ARCH_MAJORS or not 0 <= minor <= 9:
        raise ValueError(f"{what}: arch {value!r} is compute capability {major}.{minor}; "
                         f"simt compiles for {ARCH_MAJORS[0]}.0 to {ARCH_MAJORS[-1]}.x")
    return f"sm_{major}{minor}{suffix}"


def capability(target):
    """(major, minor) of a GPU target 'sm_90' / 'sm_90a'."""
    digits = target.removeprefix("sm_").removesuffix("a")
    return int(digits[:-1]), int(digits[-1])


CHECKS = {"launch_bounds": launch_bounds, "maxnreg": maxnreg, "cluster_dims": cluster_dims,
          "lineinfo": flag("lineinfo"),
          "boundscheck": flag("boundscheck"), "checks": flag("checks"),
          "narrowing": flag("narrowing"),
          "noalias": flag("noalias"), "arch": arch,
          **{name: flag(name, unset=True) for name in ("ftz", "prec_div", "prec_sqrt", "fmad")}}


def checked(options, what):
    """``options`` with every value CHECKS knows checked and normalized."""
    return {name: CHECKS[name](value, what) if name in CHECKS else value
            for name, value in options.items()}


def require_entry_registers(options, loc, what):
    """A CompileError at ``loc`` unless the options fix the kernel's registers per thread at
    entry, which ``setmaxnreg`` needs: ptxas ignores it otherwise (its C7508 message).
    ``maxnreg``, or ``launch_bounds`` with a block count, fix them."""
    bounds = options.launch_bounds or (0, 0)
    if options.maxnreg or bounds[1]:
        return
    from .errors import fail_at
    fail_at(loc, f"{what} needs the kernel's register count at entry fixed, and the kernel "
            "has neither launch_bounds=(threads, blocks) nor maxnreg=",
            "give @simt.kernel(launch_bounds=(384, 1)) (its threads per block, 1 block per "
            "multiprocessor) or maxnreg=168; without, ptxas ignores setmaxnreg")
