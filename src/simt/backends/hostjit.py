"""LLVM for the host: optimize a module, make an object file, load it and
find its functions. Object files are what the disk cache keeps."""
import ctypes
import threading

import llvmlite.binding as llvm

_lock = threading.Lock()
_state = {}


def _init():
    if not _state:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        if llvm.get_process_triple().startswith("x86_64"):
            # LLVM's post-RA list scheduler is quadratic in a block's length: 1.3-1.6 s of
            # a 3,000-statement kernel's 2.7 s of code generation, for no speed on these
            # out-of-order cores (that kernel, and bench's suite: bench/NOTES.md,
            # 2026-12-02). A process-wide LLVM option: it leaves the NVPTX back end's
            # PTX as it was (no post-RA scheduling there).
            llvm.set_option("simt", "-post-RA-scheduler=false")
        target = llvm.Target.from_triple(llvm.get_process_triple())
        features = llvm.get_host_cpu_features().flatten()
        if "+avx512f" in features.split(","):
            # AVX-512 scatters: LLVM's cost model takes them for a thread loop's strided
            # stores (out[x, y] = ... over x), which ran 1.2-1.5x slower than scalar stores
            # on the 2-core machine (bench/NOTES.md, 2026-11-29); gathers it may keep
            features += ",+prefer-no-scatter"
        tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=features,
                                          opt=3, reloc="pic", codemodel="jitdefault")
        _state["tm"] = tm
        _state["engines"] = []
        _register_runtime_symbols()
    return _state


def target_machine():
    with _lock:
        return _init()["tm"]


def triple():
    return llvm.get_process_triple()


def host_description():
    return f"{llvm.get_process_triple()} {llvm.get_host_cpu_name()}"


def optimize(llvm_ir, speed=3):
    """Parse, verify and optimize LLVM IR text; returns the binding module."""
    tm = target_machine()
    module = llvm.parse_assembly(llvm_ir)
    module.verify()
    module.triple = triple()
    module.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=speed)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)
    return module


def emit_object(module):
    return target_machine().emit_object(module)


def baseline_object(llvm_ir):
    """The object code of ``llvm_ir`` for this architecture's baseline CPU (no host
    features: code that any machine of the architecture runs, as a shared cache needs)."""
    with _lock:
        _init()
        tm = _state.get("baseline")
        if tm is None:
            target = llvm.Target.from_triple(llvm.get_process_triple())
            tm = _state["baseline"] = target.create_target_machine(
                opt=2, reloc="pic", codemodel="jitdefault")
    module = llvm.parse_assembly(llvm_ir)
    module.verify()
    module.triple = triple()
    module.data_layout = str(tm.target_data)
    return tm.emit_object(module)


def cached_object(name, llvm_ir, speed=3):
    """The object code of ``llvm_ir`` (simt's own native helpers), kept in the disk cache
    beside the kernels: LLVM's code generator takes 20-60 ms even for a small module,
    reading the file well under one. Keyed by the IR, the host, llvmlite, ``speed`` and
    this module's source (which says how the IR is optimized)."""
    import hashlib
    import os
    import llvmlite
    from ..diskblob import read, write
    from ..config import config
    with open(__file__, "rb") as f:
        recipe = hashlib.sha256(f.read()).hexdigest()
    key = hashlib.sha256("\n".join([llvm_ir, host_description(), llvmlite.__version__,
                                    str(speed), recipe]).encode()).hexdigest()[:32]
    path = os.path.join(config.cache_dir, f"{name}-{key}.o")
    code = read(path)
    if code is None:
        code = emit_object(optimize(llvm_ir, speed))
        write(path, code)
    return code


def emit_assembly(module):
    return target_machine().emit_assembly(module)


class LoadedObject:
    """An object file linked into this process; ``address(name)`` finds a function."""

    def __init__(self, object_code):
        with _lock:
            state = _init()
            empty = llvm.parse_assembly("")
            engine = llvm.create_mcjit_compiler(empty, state["tm"])
            engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
            engine.finalize_object()
            state["engines"].append(engine)      # code must outlive every kernel object
        self.engine = engine

    def address(self, name):
        return self.engine.get_function_address(name)


# ---------------------------------------------------------------- runtime symbols

PRINT_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64)


def _print_from_kernel(fmt, values, count):
    """Kernel print(): format as C's printf would (ints, %g floats), one line."""
    import sys
    text = fmt.decode("utf8")
    args, pos = [], 0
    for i in range(count):
        pos = text.index("%", pos)
        while text.startswith("%%", pos):
            pos = text.index("%", pos + 2)
        spec = text[pos + 1:pos + 4]
        raw = values[i]
        if spec.startswith("g"):
            args.append(ctypes.c_double.from_buffer_copy(ctypes.c_int64(raw)).value)
        elif spec.startswith("llu"):
            args.append(raw & 0xFFFFFFFFFFFFFFFF)
        else:
            args.append(raw)
        pos += 1
    py = text.replace("%lld", "%d").replace("%llu", "%d")
    sys.stdout.write(py % tuple(args))


_print_callback = PRINT_FN(_print_from_kernel)

WRITE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)


def _write_from_kernel(text, length):
    """Kernel printf(): a line the C library formatted, written whole to sys.stdout."""
    import sys
    sys.stdout.write(ctypes.string_at(text, length).decode("utf8", "replace"))


_write_callback = WRITE_FN(_write_from_kernel)


def _register_runtime_symbols():
    llvm.add_symbol("simt_cpu_print", ctypes.cast(_print_callback, ctypes.c_void_p).value)
    llvm.add_symbol("simt_cpu_write", ctypes.cast(_write_callback, ctypes.c_void_p).value)
