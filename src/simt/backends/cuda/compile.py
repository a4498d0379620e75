"""Typed IR -> LLVM IR -> libdevice linked in -> optimized (O3) -> PTX text,
through LLVM's NVPTX back end in llvmlite. The driver's JIT makes the PTX a
cubin when the kernel is loaded (module.Module)."""
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import llvmlite.binding as llvm
from llvmlite import ir as ll

from ...compiler import pipeline
from ...compiler.lineinfo import LineTables
from ...compiler.lltypes import i32, symbol_part
from ...errors import NotSupportedError
from ...ir.walk import all_functions
from . import devlaunch, mathcalls
from .lower import graphs
from .binary import PTX_FEATURES, CudaBinary
from . import checked, ptxfix
from .emit import CudaKernelEmitter
from .target import CudaTarget

TRIPLE = "nvptx64-nvidia-cuda"
_lock = threading.Lock()
_state = {}


def _init():
    if not _state:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _state["target"] = llvm.Target.from_triple(TRIPLE)
        _state["machines"] = {}
    return _state


def target_machine(arch):
    with _lock:
        state = _init()
        tm = state["machines"].get(arch)
        if tm is None:
            tm = state["target"].create_target_machine(cpu=arch, features=PTX_FEATURES, opt=3)
            state["machines"][arch] = tm
        return tm




def _libdevice_bitcode():
    if "libdevice" not in _state:
        from .module import find_libdevice
        path = find_libdevice()
        if path is None:
            raise RuntimeError("libdevice.10.bc not found: install the CUDA toolkit (or the "
                               "nvidia-cuda-nvcc wheel) or set CUDA_HOME")
        with open(path, "rb") as f:
            _state["libdevice"] = f.read()
    return _state["libdevice"]


def libdevice_subset(names, tm):
    """Bitcode of the part of libdevice that defines ``names`` (and what they call),
    cached per set of names: linking all 575 functions of libdevice and letting O3 throw
    away the unused ones cost ~100 ms per kernel; the subset links and optimizes in a few."""
    with _lock:
        subsets = _state.setdefault("libdevice_subsets", {})
        if names not in subsets:
            lib = llvm.parse_bitcode(_libdevice_bitcode())
            for f in lib.functions:
                if not f.is_declaration and f.name not in names:
                    f.linkage = "internal"
            for g in lib.global_variables:
                if not g.is_declaration:
                    g.linkage = "internal"
            pm = llvm.create_new_module_pass_manager()
            pm.add_global_dead_code_eliminate_pass()
            pm.run(lib, llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options()))
            subsets[names] = inlined(lib).as_bitcode()
        return subsets[names]


_NOINLINE = re.compile(r"^(attributes #\d+ = \{[^}\n]*)\bnoinline\b", re.M)


def inlined(lib):
    """``lib`` with its noinline functions (libdevice's trig-reduction slow path) made
    alwaysinline. ptxas (CUDA 13.0, sm_90, -O2 and -O3) lets a callee reached in one branch
    of a divergent warp overwrite a uniform register that the warp's other branch still
    reads: the slow path's ``R2UR UR6`` replaced an array's base address kept in UR6, and
    the other branch loaded from address 14 (fuzz seed 100609 on the H100 and H200,
    CUDA_ERROR_ILLEGAL_ADDRESS; right at -O0 and -O1; writing the call as plain ``call``
    instead of ``call.uni`` did not help; bench/results/fuzz-seed100609-h200-2026-12-02.md).
    Without the call there is nothing to overwrite."""
    text = str(lib)
    changed = _NOINLINE.sub(r"\1alwaysinline", text)
    return lib if changed == text else llvm.parse_assembly(changed)


class _Compile:
    """One compile's stages and what they leave for the binary (the target)."""

    def __init__(self, options, arch):
        self.options = options
        self.arch = arch
        self.tm = target_machine(arch)

    def stages(self):
        return [("llvm_ir", self.emit), ("optimized", self.optimize),
                ("ptx", lambda module: ptxfix.fix(self.tm.emit_assembly(module),
                                                  self.target.ptx_isa))]

    def emit(self, fn):
        module = ll.Module(name=fn.name)
        module.triple = TRIPLE
        module.data_layout = str(self.tm.target_data)
        target = self.target = CudaTarget(fn, self.options)
        target.arch = self.arch                   # lowerings with an instruction of newer GPUs
        if self.options.lineinfo:
            target.lines = LineTables(module, fn.loc.filename)
        family = [fn] + list(fn.launches)       # kernels launched from kernels: family.py
        target.layout_memory([f for member in family for f in all_functions(member)])
        self.symbol = f"simt_kernel_{symbol_part(fn.name)}"
        self.entries = [self.symbol] + [f"simt_kernel_{symbol_part(child.name)}_{i}"
                                        for i, child in enumerate(fn.launches, 1)]
        emitters = [CudaKernelEmitter(target, module, member, self.options, symbol)
                    for member, symbol in zip(family, self.entries)]
        target.kernel_entries = [em.llfunc for em in emitters]
        for em in emitters:
            annotate(module, em.build(), self.options)
        if self.options.checks:
            checked.finish(target, module)        # the table of the checks' sites
        if self.options.math().ftz:
            mathcalls.flush_denormals(module)
        no_jump_tables(module)
        self.grid_sync = "simt_grid_barrier" in module.globals
        # calls into the device runtime: launches from kernels, graph calls (lower/graphs.py)
        self.device_launches = any(name in module.globals for name in (
            devlaunch.LAUNCH, graphs.SETS_CONDITION, graphs.LAUNCHES_GRAPH))
        return str(module)

    def optimize(self, text):
        keep = {*self.entries, "simt_error_record"} | \
            {g for _, g, _ in self.target.symbol_table()}
        return optimize(text, self.tm, keep)


def annotate(module, kernel, options):
    """launch_bounds, maxnreg and cluster_dims as NVVM annotations on the kernel, which
    the NVPTX back end writes as PTX's ``.maxntid``, ``.minnctapersm``, ``.maxnreg`` and
    ``.explicitcluster`` + ``.reqnctapercluster x, y, z`` (what nvcc makes of
    ``__cluster_dims__``)."""
    bounds = options.launch_bounds or (0, 0)
    cluster = options.cluster_dims or (0, 0, 0)
    for name, value in (("maxntidx", bounds[0]), ("minctasm", bounds[1]),
                        ("maxnreg", options.maxnreg or 0), ("cluster_dim_x", cluster[0]),
                        ("cluster_dim_y", cluster[1]), ("cluster_dim_z", cluster[2])):
        if value:
            module.add_named_metadata("nvvm.annotations", [kernel, name, i32(value)])


def no_jump_tables(module):
    """Switches (and chains of compares LLVM turns into switches) as branches, as nvcc
    makes them (NVVM emits no ``brx.idx`` jump tables), so that divergent lanes split and
    reconverge as in nvcc's code. Measured on the book's hash table, whose unrolled
    ``if tid % 32 == i`` became a 32-way table: no difference (67.9 against 67.6 ms, H100,
    bench/gpu/hashtable_probe.py); the loop's unrolling was the cost (loops.py)."""
    for fn in module.functions:
        if not fn.is_declaration:
            set.add(fn.attributes, '"no-jump-tables"="true"')  # a key="value" attribute, printed


def compile_kernel(fn, options, arch="sm_90", link=True):
    """The CudaBinary of the typed IR ``fn`` for ``arch``, with ``options`` (CompileOptions).
    Needs no GPU: LLVM's NVPTX back end makes the PTX anywhere, and nvJitLink links it with
    the device code it calls (unless ``link`` is False: PTX to read, not to load)."""
    started = time.perf_counter()
    job = _Compile(options, arch)
    stages = pipeline.run(job.stages(), fn, fn.name)
    target = job.target
    files = link_files(options, target) if link else []
    if files:
        stages.update(pipeline.run([("linked", lambda ptx: link_device_code(
            ptx, files, arch, fn.name, job.device_launches, options.lineinfo))],
            stages["ptx"], fn.name))
    return CudaBinary(
        name=fn.name, symbol=job.symbol, ptx=stages["ptx"], arch=arch,
        params=[t for _, t in fn.params], symbols=target.symbol_table(),
        shared_static_bytes=target.shared_static_bytes,
        uses_dynamic_shared=target.uses_dynamic_shared, labels=list(target.labels),
        files=list(target.files), messages=list(target.messages), can_fail=target.can_fail,
        grid_sync=job.grid_sync, lineinfo=options.lineinfo, stages=stages,
        recursive=bool(target.recursive),
        cluster_dims=options.cluster_dims,
        device_launches=job.device_launches, linked=stages.get("linked"),
        link_files=tuple(os.path.basename(f.path) for f in files),
        symbol_objects=[d.data for d in target.symbols],
        compile_seconds=time.perf_counter() - started)


def link_files(options, target):
    """The files a kernel links: the kernel's own (``link=``), then those of the external
    functions it calls (simt.declare_device), each once."""
    files = list(options.link)
    for extern in target.externs.values():
        files += [f for f in extern.files if f not in files]
    return files


def link_device_code(ptx, files, arch, name, device_launches, line_info):
    """The cubin of the kernel's PTX linked with ``files`` (linker.py); with the device
    runtime too when the kernel launches kernels."""
    from . import linker
    devrt = None
    if device_launches:
        from .link import require_devrt
        devrt = require_devrt(name)
    return linker.link(ptx, files, arch, name, devrt=devrt, line_info=line_info)


def optimize(text, tm, keep):
    """Parse and verify, link libdevice when a __nv_ function is called, make all but
    ``keep`` internal, and run the O3 pipeline (NVVMReflect included)."""
    module = llvm.parse_assembly(text)
    module.verify()
    wanted = frozenset(f.name for f in module.functions
                       if f.name.startswith("__nv_") and f.is_declaration)
    if wanted:
        bitcode = libdevice_subset(wanted, tm)
        with _lock:
            lib = llvm.parse_bitcode(bitcode)
        lib.triple = TRIPLE
        lib.data_layout = str(tm.target_data)
        module.link_in(lib)
    for f in module.functions:
        if not f.is_declaration and f.name not in keep:
            f.linkage = "internal"
    for g in module.global_variables:
        if g.name not in keep and not g.is_declaration and g.name != "simt_dynamic_shared":
            g.linkage = "internal"
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)
    return module


def sass(binary):
    """The SASS of a CudaBinary: its PTX assembled by ptxas, disassembled by nvdisasm
    (or cuobjdump); NotSupportedError naming the CUDA tools that are missing."""
    ptxas = shutil.which("ptxas")
    disassembler = shutil.which("nvdisasm") or shutil.which("cuobjdump")
    if ptxas is None or disassembler is None:
        missing = " and ".join(n for n, p in (("ptxas", ptxas),
                                              ("nvdisasm or cuobjdump", disassembler)) if not p)
        raise NotSupportedError(f"inspect_sass needs CUDA's {missing} on the PATH (the CUDA "
                                "toolkit has them); inspect_ptx needs nothing")
    with tempfile.TemporaryDirectory() as folder:
        ptx, cubin = os.path.join(folder, "k.ptx"), os.path.join(folder, "k.cubin")
        with open(ptx, "w") as f:
            f.write(binary.ptx)
        if getattr(binary, "linked", None) is not None:     # the linked cubin, as loaded
            with open(cubin, "wb") as f:
                f.write(binary.linked)
        else:
            relocatable = ["-c"] if binary.device_launches else []   # calls the runtime
            subprocess.run([ptxas, f"-arch={binary.arch}", *relocatable, ptx, "-o", cubin],
                           check=True, capture_output=True)
        command = [disassembler, cubin] if disassembler.endswith("nvdisasm") else \
            [disassembler, "-sass", cubin]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout
