"""Launch host time for every kind of kernel argument, against cuda.core's launch of an
empty kernel with the same PTX parameters: host microseconds per launch of a one-block
kernel, in batches of 250, each batch timed on the host and synchronized outside its
timing (the queue never fills, so the figure is the launch's host time, not the GPU's
time per empty kernel). The ways of launching a kind take turns batch by batch (ROUNDS x
12 batches each), so that this machine's drift (its launches' host time moves by ~1 us
within a minute) falls on all of them alike; the ratio simt / cuda.core is the median
over neighbouring batches' ratios. For each kind, the same
argument objects at every launch, and new ones (a pool of 8 made beforehand, cycled, so
that making them is not counted: the launch sees a different object each time); cuda.core
likewise with the same parameter values and with 8 sets of values cycled (the driver takes
longer for a launch whose values changed: compare like with like).

"driver alone": cuLaunchKernel through cuda.bindings on the very CUfunction simt launches for
the kind, with a prebuilt parameter buffer (the driver's time for that function; it moves
by about a microsecond between functions whose code is the same empty kernel).

Kinds: a device array; an int32; a texture over linear memory; a texture over a CUDA array;
a surface; a record (np.void of a structured dtype); a vector type (simt.float4); and a
kernel that reads a module-level simt.Constant (its one argument an array).

    PYTHONPATH=src python3 bench/gpu/launch_kinds.py [out.json]
"""
import datetime
import importlib.util
import json
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests"))
import gpu_driver_check as drv          # noqa: E402

import simt                             # noqa: E402

ROUNDS, BATCHES, BATCH, POOL = int(os.environ.get("ROUNDS", 3)), 12, 250, 8
RECORD = np.dtype([("x", np.float32), ("n", np.int32), ("w", np.float64)])
SOURCE = '''
import numpy as np
import simt
TABLE = simt.Constant(np.arange(4, dtype=np.float32))

@simt.kernel
def one(p):
    pass

@simt.kernel
def reads_constant(out):
    if simt.threadIdx.x == 1000:
        out[0] = TABLE[0]
'''
# the PTX parameters of each kind, for cuda.core's empty kernel
PARAMS = {"array": ["u64", "u64"], "int32": ["s32"], "texture (linear)": ["u64"],
          "texture (CUDA array)": ["u64"], "surface": ["u64"], "record": ["f32", "s32", "f64"],
          "float4": ["f32"] * 4, "Constant symbol": ["u64", "u64"]}


def kernels():
    path = os.path.join(tempfile.mkdtemp(prefix="simt-kinds-"), "kinds_kernels.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    spec = importlib.util.spec_from_file_location("kinds_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def warmed(launch_once, sync):
    """``launch_once`` after 200 untimed launches."""
    for _ in range(200):
        launch_once()
    sync()
    return launch_once


def batch_time(launch_once, sync, batch=BATCH):
    """Host microseconds per launch over one batch (the synchronize after it not counted)."""
    start = time.perf_counter()
    for _ in range(batch):
        launch_once()
    spent = time.perf_counter() - start
    sync()
    return spent / batch * 1e6


def argument_pools():
    """kind -> POOL argument objects of that kind."""
    host = np.arange(64, dtype=np.float32)

    def cuda_array(surface=False):
        array = simt.CudaArray((64,), np.float32, surface=surface)
        array.copy_from(host)
        return array
    return {
        "array": [simt.zeros(16, np.float32) for _ in range(POOL)],
        "int32": [np.int32(i + 1) for i in range(POOL)],
        "texture (linear)": [simt.Texture(simt.to_device(host)) for _ in range(POOL)],
        "texture (CUDA array)": [simt.Texture(cuda_array()) for _ in range(POOL)],
        "surface": [simt.Surface(cuda_array(surface=True)) for _ in range(POOL)],
        "record": [np.array((i, i, i), RECORD)[()] for i in range(POOL)],
        "float4": [simt.float4(i, 1, 2, 3) for i in range(POOL)],
        "Constant symbol": [simt.zeros(16, np.float32) for _ in range(POOL)],
    }


def driver_launch(kernel, argument, stream):
    """cuLaunchKernel through cuda.bindings on the CUfunction simt launches for this
    argument, its parameter buffer prebuilt: the driver's own time for that function."""
    from simt.backends.cuda.driver import api
    from simt.runtime.launch import arg_types
    launcher = kernel.binary_for(arg_types(kernel, (argument,)), simt.get_device()).launcher
    handle, params, go, s = launcher._handle, launcher.params, api().cuLaunchKernel, stream.handle
    return lambda: go(handle, 1, 1, 1, 1, 1, 1, 0, s, params, 0)


def cuda_core_launches(params):
    """(same values, new values, synchronize): cuda.core's launches of an empty kernel with
    these PTX parameters on a stream of its own, zeros at every launch or one of 8 sets of
    values in turn; or a string saying why cuda.core cannot be had."""
    try:
        import cuda.core as cc
        dev = cc.Device(0)
        dev.set_current()               # the primary context, which simt uses too
        stream = dev.create_stream()
        decl = ", ".join(f".param .{p} p{i}" for i, p in enumerate(params))
        code = drv.HEADER.format(version="8.0", target="sm_90") + \
            f".visible .entry k({decl})\n{{\n    ret;\n}}\n"
        kernel = cc.Program(code, code_type="ptx").compile("cubin").get_kernel("k")
        config = cc.LaunchConfig(grid=1, block=1)
        kinds = {"u64": np.uint64, "s32": np.int32, "f32": np.float32, "f64": np.float64}
        zeros = [kinds[p](0) for p in params]
        sets = [[kinds[p](k + 1) for p in params] for k in range(POOL)]
        turn = [0]

        def cycling():
            turn[0] = (turn[0] + 1) % POOL
            cc.launch(stream, config, kernel, *sets[turn[0]])
        return (lambda: cc.launch(stream, config, kernel, *zeros)), cycling, stream.sync
    except Exception as exc:
        return f"n/a ({type(exc).__name__}: {str(exc)[:60]})"


def launches(module, pools, stream):
    """kind -> way -> (a function making one launch that way, the synchronize after a
    batch), or a string saying why that way cannot be had."""
    backend = simt.get_device().backend
    ways = {}
    for kind, pool in pools.items():
        k = module.reads_constant if kind == "Constant symbol" else module.one
        same = pool[0]
        for _ in range(3):              # bound for this kind: what k[...] hands out now
            k[1, 1, 0, stream](same)
        launch = k[1, 1, 0, stream]
        turn = [0]

        def cycling(launch=launch, pool=pool, turn=turn):
            turn[0] = (turn[0] + 1) % POOL
            launch(pool[turn[0]])
        core = cuda_core_launches(PARAMS[kind])
        if hasattr(backend, "make_current"):
            backend.make_current(force=True)
        sync = stream.synchronize
        ways[kind] = {"simt, same object": (lambda launch=launch, same=same: launch(same), sync),
                      "simt, new objects": (cycling, sync),
                      "driver alone": (driver_launch(k, same, stream), sync)}
        if isinstance(core, str):
            ways[kind].update({"cuda.core": core, "cuda.core, new values": core})
        else:
            ways[kind].update({"cuda.core": (core[0], core[2]),
                               "cuda.core, new values": (core[1], core[2])})
    return ways


def main():
    device = simt.get_device()
    module = kernels()
    stream = simt.Stream()      # cuda.core launches on a stream it created: so does simt here
    ways = launches(module, argument_pools(), stream)
    names = list(ways)
    times = {kind: {way: [] for way in ways[kind]} for kind in names}
    for kind in names:
        for way, fn in ways[kind].items():
            if not isinstance(fn, str):
                warmed(*fn)
    # batch by batch, every way of a kind in turn (in another order each time), so that
    # the machine's drift falls on all of them alike
    for r in range(ROUNDS):
        for kind in names[r % len(names):] + names[:r % len(names)]:
            order = [w for w, fn in ways[kind].items() if not isinstance(fn, str)]
            for b in range(BATCHES):
                shift = (b + r) % len(order)
                for way in order[shift:] + order[:shift]:
                    times[kind][way].append(batch_time(*ways[kind][way]))
    table = {}
    for kind in names:
        cells = {way: (drv._median(v) if v else ways[kind][way])
                 for way, v in times[kind].items()}
        for ours, theirs, label in (("simt, same object", "cuda.core", "same/same"),
                                    ("simt, new objects", "cuda.core, new values", "new/new")):
            if times[kind][theirs]:     # the median of neighbouring batches' ratios
                cells[label] = drv._median([x / y for x, y in zip(times[kind][ours],
                                                                 times[kind][theirs])])
        table[kind] = cells
    name = device.properties.name
    print(f"\nLaunch host time by argument kind, µs per launch ({name}, "
          f"{datetime.date.today()}; median of {ROUNDS} x {BATCHES} batches of {BATCH}, "
          "taken in turns)")
    cols = ["simt, same object", "simt, new objects", "cuda.core", "cuda.core, new values",
            "driver alone"]
    print(f"{'argument':22s} " + " ".join(f"{c:>18s}" for c in cols) + "  same/same new/new")
    for kind in names:
        cells = table[kind]
        ratio = (f"{cells['same/same']:8.2f}  {cells['new/new']:8.2f}"
                 if "same/same" in cells else "")
        print(f"{kind:22s} " + " ".join(
            f"{cells[c]:18.2f}" if isinstance(cells[c], float) else f"{cells[c]:>18s}"
            for c in cols) + f"  {ratio}")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": name, "date": str(datetime.date.today()),
                       "unit": "microseconds per launch; same/same and new/new: the "
                               "median of simt / cuda.core over neighbouring batches",
                       "rows": table,
                       "batches": {kind: {way: [round(x, 3) for x in v] for way, v in cells.items()}
                                   for kind, cells in times.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
