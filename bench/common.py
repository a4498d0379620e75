"""What both runners share: statistics, C twin calls, compile-time and import-time
probes, the results file, the summary table and the ratio plot."""
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATE = os.environ.get("BENCH_DATE", time.strftime("%Y-%m-%d"))     # results files are named by it


def median(values):
    return float(statistics.median(values))


def c_args(case, h, size):
    """ctypes arguments for a twin: (pointer array, int64 array, double array); ``h`` maps
    array names to objects with a data pointer (NumPy arrays or device arrays)."""
    ptrs = (ctypes.c_void_p * max(1, len(case.arrays)))(*[data_ptr(h[a]) for a in case.arrays])
    ints = (ctypes.c_long * max(1, len(case.ints)))(*[int(h.get(k, size.get(k, 0)))
                                                      for k in case.ints])
    reals = (ctypes.c_double * max(1, len(case.reals)))(*[float(h.get(k, size.get(k, 0)))
                                                          for k in case.reals])
    return ptrs, ints, reals


def data_ptr(obj):
    if isinstance(obj, np.ndarray):
        return obj.ctypes.data
    return obj.__cuda_array_interface__["data"][0]


def poisoned(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return np.full_like(a, np.nan)
    return np.full_like(a, 0x5A if a.dtype.itemsize == 1 else -0x5A5A5A5A)


def import_time_ms(runs=7):
    """Median wall time of ``import simt`` in a fresh interpreter."""
    code = "import time; t = time.perf_counter(); import simt; print(time.perf_counter() - t)"
    env = dict(os.environ)
    out = [float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                capture_output=True, text=True).stdout) for _ in range(runs)]
    return round(median(out) * 1e3, 1)


def compile_times(cases):
    """Per simt kernel: cold compile (no disk cache) to a loaded kernel, the in-process
    cached lookup, and a load from the disk cache by a fresh Kernel object. Milliseconds.
    The runners point SIMT_CACHE_DIR at a fresh folder before importing simt."""
    import simt
    from simt.ir import types as T
    rows, seen = {}, set()
    for case in cases:
        for k, sig in case.kernels:
            if k.__name__ in seen:
                continue
            seen.add(k.__name__)
            types = T.parse_signature(sig)
            cold = simt.kernel(cache=False)(k.pyfunc)
            t0 = time.perf_counter()
            cold.compile(types)
            t1 = time.perf_counter()
            cold.compile(types)
            t2 = time.perf_counter()
            writer = simt.kernel(cache=True)(k.pyfunc)
            writer.compile(types)
            reader = simt.kernel(cache=True)(k.pyfunc)
            t3 = time.perf_counter()
            reader.compile(types)
            t4 = time.perf_counter()
            rows[k.__name__] = {"cold_ms": round((t1 - t0) * 1e3, 2),
                                "in_process_ms": round((t2 - t1) * 1e3, 4),
                                "disk_ms": round((t4 - t3) * 1e3, 2)}
    return rows


FRESH = r"""
import sys, time
t0 = time.perf_counter()
import simt
sys.path.insert(0, {bench!r})
simt.set_device({device!r})
from workloads import matmul
from simt.ir import types as T
t1 = time.perf_counter()
k = simt.kernel(cache=False)(matmul.matmul.pyfunc)
k.compile(T.parse_signature(matmul.CASES[0].kernels[0][1]))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def fresh_matmul_compile_ms(device, runs=3):
    """The tiled matmul compiled cold as the first kernel of a fresh process (LLVM's
    start-up and, on a GPU, the driver's PTX JIT included): the median of ``runs``."""
    code = FRESH.format(bench=HERE, device=device)
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True).stdout.split()
        times.append(float(out[1]))
    return round(median(times) * 1e3, 1)


def torch_event_ms(fn, reps=7, inner=10):
    """Milliseconds a call of ``fn`` on the current CUDA device, by PyTorch's CUDA events
    around ``inner`` calls back to back (so host-side launch work overlaps the GPU's), the
    median of ``reps``, after one warm-up call."""
    import torch
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / inner)
    return float(np.median(times))


def geomean(values):
    values = [v for v in values if v and v > 0]
    return float(np.exp(np.mean(np.log(values)))) if values else None


def write_results(results, device_tag, folder=None):
    folder = folder or os.path.join(HERE, "results")
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, f"{device_tag}-{DATE}")
    with open(base + ".json", "w") as f:
        json.dump(results, f, indent=1)
    return base


def machine():
    return {"python": platform.python_version(), "machine": platform.machine(),
            "processor": platform.processor(), "cores": os.cpu_count()}


# ---------------------------------------------------------------- plot
def plot_ratios(path, title, labels, ratios, limit=1.0):
    """A horizontal bar chart of ratios (simt / reference) with a line at 1.0 and at
    ``limit``: matplotlib when installed, else Pillow, else bars alone through numpy and zlib."""
    try:
        return _plot_matplotlib(path, title, labels, ratios, limit)
    except ImportError:
        pass
    w, row, left = 900, 22, 190
    h = 50 + row * len(labels)
    scale = (w - left - 60) / max(2.0, max([r for r in ratios if r] + [limit]) * 1.05)
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        Image = None
    if Image is not None:
        img = Image.new("RGB", (w, h), "white")
        d = ImageDraw.Draw(img)
        d.text((10, 8), title, fill="black")
        for i, (label, r) in enumerate(zip(labels, ratios)):
            y = 35 + i * row
            d.text((10, y + 4), label, fill="black")
            if r:
                color = (70, 130, 180) if r <= limit else (200, 80, 60)
                d.rectangle([left, y + 2, left + r * scale, y + row - 4], fill=color)
                d.text((left + r * scale + 5, y + 4), f"{r:.2f}", fill="black")
        for x, color in ((1.0, "black"), (limit, (200, 80, 60))):
            d.line([left + x * scale, 30, left + x * scale, h - 5], fill=color)
        img.save(path)
        return path
    pix = np.full((h, w, 3), 255, np.uint8)
    for i, r in enumerate(ratios):
        if r:
            y = 35 + i * row
            pix[y + 2:y + row - 4, left:left + int(r * scale)] = (70, 130, 180)
    pix[30:h - 5, left + int(scale)] = 0
    raw = b"".join(b"\0" + pix[y].tobytes() for y in range(h))

    def chunk(kind, data):
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", w.to_bytes(4, "big") + h.to_bytes(4, "big")
           + b"\x08\x02\0\0\0") + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)
    return path


def _plot_matplotlib(path, title, labels, ratios, limit):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.28 * len(labels)))
    values = [r or 0 for r in ratios]
    colors = ["#4682b4" if r <= limit else "#c8503c" for r in values]
    ax.barh(range(len(labels)), values, color=colors)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    for y, r in enumerate(ratios):
        if r:
            ax.text(r, y, f" {r:.2f}", va="center", fontsize=8)
    ax.axvline(1.0, color="black", linewidth=1)
    if limit != 1.0:
        ax.axvline(limit, color="#c8503c", linewidth=1)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("time ratio (lower is faster)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def table(headers, rows):
    """A Markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def fmt(v, digits=3):
    if v is None:
        return "-"
    return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:.0f}"


def gpu_script(check, measure):
    """The command line of the GPU comparison scripts (wmma_gemm, async_copy, cluster_reduce):
    ``--check`` runs their kernels on the CPU device against NumPy; otherwise ``measure()``
    runs on the GPU and its result is printed as JSON, and written to the path given."""
    if "--check" in sys.argv:
        check()
        return
    text = json.dumps(measure(), indent=1)
    print(text)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
