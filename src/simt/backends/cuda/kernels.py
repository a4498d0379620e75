"""Compiled kernels on a GPU: loading PTX, placing module-level symbols, and the
launch path (NumPy arguments are copied in, the kernel runs, they are copied back).

Module-level ``simt.Global`` arrays live in one device allocation per device (managed
memory for ``simt.Managed``); each module that uses one holds a pointer to it in a
__constant__ global. ``simt.Constant``
arrays are __constant__ globals of each module that uses them; ``copy_from`` writes
every copy.
"""
import ctypes
import re

import numpy as np

from . import capture, hostcopies
from .driver import api, call
from .launch import Launcher, build_trampoline_soon, launch_attributes
from .link import link_devrt
from .module import Module
from ...errors import CudaError, NotSupportedError


class CudaKernel:
    """A CudaBinary loaded into a context: module, function and a prepared Launcher."""

    def __init__(self, backend, binary):
        self.binary = binary
        image = binary.ptx
        if binary.linked is not None:        # linked with device code (and the runtime)
            image = binary.linked
        elif binary.device_launches:         # dynamic parallelism: the device runtime
            backend.make_current()
            image = link_devrt(binary.ptx, binary.name, binary.lineinfo)
        try:
            self.module = Module(image, backend=backend, line_info=binary.lineinfo)
        except CudaError as exc:
            raise type(exc)(rejected(binary, str(exc))) from None
        self.function = self.module.get_function(binary.symbol)
        self.launcher = Launcher(self.function, binary.param_kinds, backend)
        build_trampoline_soon()        # ready by the second launch, off the launch path
        self.placed = {}          # symbol global name -> the _Symbol it was filled from
        if binary.can_fail:
            address, _ = self.module.get_global("simt_error_record")
            backend.copy_htod(address, np.array([backend.error_record()[1]], np.uint64))


def rejected(binary, error):
    """The driver's PTX JIT refused a kernel's PTX: the error naming the kernel and, where
    the line it names is in an inline asm block (simt.asm: LLVM marks them), that PTX."""
    lines = binary.ptx.splitlines()
    notes = []
    for number in sorted({int(n) for n in re.findall(r"ptx input, line (\d+)", error)}):
        opened = [i for i, text in enumerate(lines[:number]) if "// begin inline asm" in text]
        closed = [i for i, text in enumerate(lines[:number]) if "// end inline asm" in text]
        if opened and (not closed or closed[-1] < opened[-1]) and number <= len(lines):
            notes.append(f"  PTX line {number} is simt.asm's: {lines[number - 1].strip()}")
    hint = "\n".join(notes) or "  its simt.asm templates, if it has any, are the likely cause"
    return (f"kernel '{binary.name}': the driver could not compile its PTX\n{hint}\n{error}\n"
            f"  kernel.inspect_ptx() shows the PTX")


class SymbolPlacement:
    """A module-level array on one device: ``write``/``read`` as _Symbol expects."""

    def __init__(self, backend, symbol, kind):
        self.backend = backend
        self.kind = kind
        self.addresses = []       # 'array': the __constant__ copy in each module
        self.alloc = None
        if kind == "pointer" and symbol.managed:      # __managed__: the host reaches it too
            self.alloc = backend.alloc_managed(symbol.nbytes)
            self.alloc.managed = True
        elif kind == "pointer":
            self.alloc = backend.alloc(symbol.nbytes)
        if self.alloc is not None:
            backend.copy_htod(self.alloc.ptr, np.ascontiguousarray(symbol.host))

    def write(self, host, stream=None):
        host = np.ascontiguousarray(host)
        for address in ([self.alloc.ptr] if self.alloc is not None else self.addresses):
            self.backend.copy_htod(address, host)

    def read(self, host, stream=None):
        source = self.alloc.ptr if self.alloc is not None else (self.addresses or [None])[0]
        if source is not None:
            self.backend.synchronize()
            self.backend.copy_dtoh(host, source)


def symbol_storage(backend, symbol):
    """cudaGetSymbolAddress: the allocation of a Global or Managed symbol on this GPU,
    made now if no kernel placed it yet. A Constant is a __constant__ global of each
    module that reads it: no one address holds it."""
    if symbol.readonly:
        raise NotSupportedError(
            f"device_array() of a simt.Constant on cuda:{backend.index}: a GPU holds a "
            "Constant in each module that reads it, so no one address holds it; update it "
            "with .copy_from(host_array), or make it a simt.Global (the cpu and sim devices "
            "give a view of a Constant)")
    device = f"cuda:{backend.index}"
    placement = symbol.placements.get(device)
    if placement is None:
        backend.make_current()
        placement = symbol.placements[device] = SymbolPlacement(backend, symbol, "pointer")
    return placement.alloc


def place_symbols(backend, kernel, loaded):
    """Fill this module's symbol globals on first use."""
    binary = loaded.binary
    objects = binary.symbol_objects
    device = f"cuda:{backend.index}"
    for (name, gname, kind), symbol in zip(binary.symbols, objects):
        if loaded.placed.get(gname) is symbol:
            continue
        placement = symbol.placements.get(device)
        if placement is None:
            placement = symbol.placements[device] = SymbolPlacement(backend, symbol, kind)
        address, size = loaded.module.get_global(gname)
        if kind == "pointer":
            backend.copy_htod(address, np.array([placement.alloc.ptr], np.uint64))
        else:
            placement.addresses.append(address)
            backend.copy_htod(address, np.ascontiguousarray(symbol.host))
        loaded.placed[gname] = symbol


def launch_error(binary, record, kernel_name):
    """The exception for an error record (simt/fault.py: the same for every device)."""
    import simt.fault as fault
    return fault.decode(record, binary, kernel_name)


def run_launch(backend, kernel, loaded, grid, block, shared_bytes, stream, args,
               cooperative=False, cluster=None, programmatic=False):
    """One launch the full way. ``cluster``: in clusters of that shape (the PTX of a kernel
    with cluster_dims fixes it already: no launch attribute then, as for nvcc's
    ``__cluster_dims__`` kernels launched with <<<>>>); ``programmatic``: it may start
    before the stream's previous kernel ends (cuLaunchKernelEx with both attributes)."""
    backend.make_current()
    binary = loaded.binary
    if binary.grid_sync and not cooperative:
        from ...errors import LaunchError
        raise LaunchError(f"kernel '{kernel.__name__}' calls grid.sync(), which needs a "
                          f"cooperative launch: {kernel.__name__}.launch_cooperative(grid, "
                          "block, args)")
    if binary.symbols:
        with capture.relaxed():        # first use, maybe inside a capture block
            place_symbols(backend, kernel, loaded)
    if shared_bytes:
        loaded.function.ensure_dynamic_shared(shared_bytes)
    copies, placed = [], {}          # (host region, its allocation); id(array) -> address
    for span, members in hostcopies.host_regions(list(hostcopies.numpy_arguments(args))):
        alloc = backend.temporary(span.nbytes)
        backend.copy_htod(alloc.ptr, span)
        copies.append((span, alloc, any(a.flags.writeable for a, _ in members)))
        placed.update((id(a), alloc.ptr + offset) for a, offset in members)

    values = kernel_values(binary, args, placed)
    handle = getattr(stream, "handle", stream)
    if binary.can_fail:
        backend.error_source = (binary, kernel.__name__)
    if binary.cluster_dims is not None:
        cluster = None
    if cluster is not None or programmatic:
        loaded.launcher.extended(grid, block, values, shared_bytes, handle, cluster,
                                 programmatic)
    else:
        launch = loaded.launcher.cooperative if cooperative else loaded.launcher.launch
        launch(grid, block, values, shared_bytes, handle)
    if copies:
        backend.synchronize()          # raises an error the kernel recorded
        for span, alloc, writeable in copies:
            if writeable:                  # read-only host memory is never written
                backend.copy_dtoh(span, alloc.ptr)


def kernel_values(binary, args, placed=None):
    """The flat parameter values of a launch (``placed``: id(NumPy array) -> the address
    of its device copy)."""
    from . import params as P

    def pointer_of(value):
        device_ptr = getattr(value, "device_ptr", None)
        if device_ptr is not None:                 # mapped host memory: zero-copy
            return device_ptr
        if isinstance(value, np.ndarray):
            return (placed or {}).get(id(value), 0)   # 0: an empty array
        if hasattr(value, "ptr"):
            return int(value.ptr)
        return int(value.__cuda_array_interface__["data"][0])
    return [v for t, a in zip(binary.params, args) for v in P.values(t, a, pointer_of)]


SLOTS = 2       # parameter buffers per launch function (runtime/binder.py)


def native_launch(backend, kernel, loaded, types, grid, block, shared_bytes, stream,
                  classes=None):
    """This kernel's launch for runtime/binder.py. Module-level symbols were placed by
    the configuration's first launch (run_launch), and the binary's symbols are fixed
    objects, so later launches have nothing to place. Arrays, textures, surfaces, vector
    values, records and plain scalars: the launch function is one native call that
    checks, packs and launches (packlaunch.py). Others, or while that code is being made:
    pack the plan's values into one of its own ``SLOTS`` parameter buffers (params.plan)
    and make one native call (Launcher.native_call); while the native code is being made,
    ``later`` tells the runtime when to bind again."""
    from ...runtime.backend import Native
    from . import params as P
    binary = loaded.binary
    launcher = loaded.launcher
    source = (binary, kernel.__name__)
    make = launcher.packed_route(classes, types, grid, block, shared_bytes, stream,
                                 (backend, source) if binary.can_fail else None) \
        if classes is not None else None
    if make is not None:
        return Native(complete=make)
    lines = ["backend.error_source = source"] if binary.can_fail else []
    plan, helpers = P.plan(types)
    scope = dict(helpers, pack=launcher.pack, backend=backend, source=source)
    for k in range(SLOTS):
        storage, pointers = launcher.new_buffer()
        params = ctypes.addressof(pointers) if launcher.params else None
        scope[f"storage{k}"], scope[f"pointers{k}"] = storage, pointers
        scope[f"failed{k}"] = launcher.native_failed(grid, block, shared_bytes, stream, params)
        scope[f"call{k}"] = launcher.native_call(grid, block, shared_bytes, stream, params)
    lines += ["err = call{slot}()", "if err:", "    failed{slot}(err)"]
    later = launcher.packed_later(classes, types) if classes is not None else None
    return Native(lines, scope, plan, SLOTS, later=later)


def max_active_clusters(backend, loaded, grid, block, cluster, shared_bytes):
    """cuOccupancyMaxActiveClusters for this configuration. A kernel with cluster_dims has
    its shape in its code: the query then names none, as the driver asks."""
    backend.make_current()
    if shared_bytes:
        loaded.function.ensure_dynamic_shared(shared_bytes)
    d = api()
    config = d.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = block
    config.sharedMemBytes = shared_bytes
    config.hStream = d.CUstream(0)
    config.attrs = launch_attributes(None if loaded.binary.cluster_dims else cluster)
    config.numAttrs = len(config.attrs)
    return int(call(d.cuOccupancyMaxActiveClusters, loaded.function.handle, config))


def require_programmatic(backend, kernel):
    """Programmatic dependent launch needs compute capability 9.0 (griddepcontrol and the
    launch attribute): a NotSupportedError on older GPUs, before anything is launched."""
    major, minor = backend.properties().compute_capability
    if major < 9:
        from ...errors import NotSupportedError
        raise NotSupportedError(
            f"programmatic dependent launch of '{kernel.__name__}' needs compute capability "
            f"9.0 or higher; cuda:{backend.index} is {major}.{minor}: launch it without "
            "programmatic=True: the launches of a stream then run one after another")


def refuse_recursion(binary, name):
    """Recursive device functions run on the cpu and sim devices only: on the H200
    (2026-12-02) a recursive tree walk faulted (CUDA_ERROR_ILLEGAL_ADDRESS, which leaves the
    context unusable) and other recursive kernels' PTX did not load. Until that is found, a
    launch on a GPU is refused before it can harm the process's context; the PTX is still
    made (inspect_ptx) and assembles."""
    if binary.recursive:
        raise NotSupportedError(
            f"kernel '{name}' calls a device function recursively: recursion runs on the cpu "
            f"and sim devices; on GPUs it is not supported yet (docs/kernel-language.md, "
            f"Recursion). For the GPU, write the recursion as a loop with an explicit stack")
