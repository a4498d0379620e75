"""Jacobi iteration for the 2-D Laplace equation, split over several devices by rows with a
halo exchange, as NVIDIA's multi-GPU programming models examples do it: left and right
edges held at sin(2 pi y / (ny - 1)), periodic in y, each part owning a band of rows plus
one halo row above and below that its neighbours fill after every step.

This module is the single-process style: one host thread drives every part, and the halo
rows go between parts by device-to-device copies. With two or more GPUs each part is on its
own GPU; otherwise the parts share the current device (the CPU device, or one GPU), which
checks the decomposition but does not speed anything up. ``jacobi_mpi`` runs the same parts
with one MPI rank each (and NCCL). Every partitioned solve is bit-identical to the
one-device solve: each cell is updated by the same expression from the same inputs.
"""
import math
import time

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx

NAME = "jacobi"
SECTION = "multi-GPU"
DESCRIPTION = "2-D Jacobi solver split over devices by rows, with halo exchange (scaling out)"

BLOCK_X, BLOCK_Y = 32, 8
THREADS = BLOCK_X * BLOCK_Y
TWO_PI = 2.0 * math.pi


@simt.kernel
def initialize_boundaries(a_new, a, offset, ny):
    """Left and right edges of local rows 0..rows+1 (global rows offset..): sin(2 pi y/(ny-1))."""
    nx = a.shape[1]
    iy = blockIdx.x * blockDim.x + threadIdx.x
    while iy < a.shape[0]:
        y0 = math.sin(TWO_PI * (offset + iy) / (ny - 1))
        a[iy, 0] = y0
        a[iy, nx - 1] = y0
        a_new[iy, 0] = y0
        a_new[iy, nx - 1] = y0
        iy += blockDim.x * gridDim.x


@simt.kernel
def jacobi_kernel(a_new, a, l2_norm, iy_start, iy_end, calculate_norm):
    """One sweep over rows iy_start..iy_end-1; with calculate_norm, add the block's sum of
    squared changes to l2_norm[0]."""
    nx = a.shape[1]
    cache = simt.shared.array(THREADS, np.float64)
    iy = blockIdx.y * blockDim.y + threadIdx.y + iy_start
    ix = blockIdx.x * blockDim.x + threadIdx.x + 1
    residue = 0.0
    if iy < iy_end and ix < nx - 1:
        new_val = 0.25 * (a[iy, ix + 1] + a[iy, ix - 1] + a[iy + 1, ix] + a[iy - 1, ix])
        a_new[iy, ix] = new_val
        change = new_val - a[iy, ix]
        residue = change * change
    if calculate_norm != 0:                  # the same for the whole block: barriers are safe
        t = threadIdx.y * blockDim.x + threadIdx.x
        cache[t] = residue
        simt.syncthreads()
        i = THREADS // 2
        while i != 0:
            if t < i:
                cache[t] += cache[t + i]
            simt.syncthreads()
            i //= 2
        if t == 0:
            simt.atomic.add(l2_norm, 0, cache[0])


def chunks(ny, parts):
    """[(first global row, rows)]: the ny - 2 interior rows over ``parts`` as NVIDIA's
    examples split them (sizes differ by at most one, the smaller ones first)."""
    interior = ny - 2
    low = interior // parts
    if low < 1:
        raise ValueError(f"{interior} interior rows cannot be split over {parts} parts")
    n_low = parts * (low + 1) - interior
    out, start = [], 1
    for p in range(parts):
        rows = low if p < n_low else low + 1
        out.append((start, rows))
        start += rows
    return out


class Domain:
    """One band of the grid on one device: local rows 1..rows are global rows first..first+rows-1;
    local rows 0 and rows+1 are the halos its neighbours above and below fill."""

    def __init__(self, nx, ny, first, rows, device=None):
        self.nx, self.ny, self.first, self.rows = nx, ny, first, rows
        self.device = device or simt.get_device()
        with simt.use_device(self.device):
            self.a = simt.zeros((rows + 2, nx), np.float64)
            self.a_new = simt.zeros((rows + 2, nx), np.float64)
            self.l2 = simt.zeros(1, np.float64)
            initialize_boundaries[(rows + 2 + 127) // 128, 128](
                self.a_new, self.a, np.int64(first - 1), np.int64(ny))

    def step(self, norm, stream=None):
        """Launch one sweep into a_new (and the norm's sum into l2, zeroed first, if asked)."""
        with simt.use_device(self.device):
            if norm:
                self.l2.fill(0)
            grid = ((self.nx - 2 + BLOCK_X - 1) // BLOCK_X, (self.rows + BLOCK_Y - 1) // BLOCK_Y)
            jacobi_kernel[grid, (BLOCK_X, BLOCK_Y), 0, stream](
                self.a_new, self.a, self.l2, np.int64(1), np.int64(self.rows + 1),
                np.int32(bool(norm)))

    def swap(self):
        self.a, self.a_new = self.a_new, self.a

    # the rows a halo exchange moves, all in a_new (the array the step just wrote)
    def first_row(self):
        """Sent to the part above, whose bottom halo it becomes."""
        return self.a_new[1]

    def last_row(self):
        """Sent to the part below, whose top halo it becomes."""
        return self.a_new[self.rows]

    def top_halo(self):
        return self.a_new[0]

    def bottom_halo(self):
        return self.a_new[self.rows + 1]

    def interior(self):
        """The owned rows (of a: call after swap), copied to the host."""
        return self.a.copy_to_host()[1:self.rows + 1]


def make_domains(nx, ny, devices):
    """One Domain per entry of ``devices`` (a device may appear several times), with peer
    access between neighbouring GPUs where they have it (cudaDeviceEnablePeerAccess)."""
    for i, dev in enumerate(devices):
        for peer in (devices[i - 1], devices[(i + 1) % len(devices)]):
            if peer.name != dev.name and simt.can_access_peer(dev, peer):
                with simt.use_device(dev):
                    simt.enable_peer_access(peer)
    return [Domain(nx, ny, first, rows, dev)
            for dev, (first, rows) in zip(devices, chunks(ny, len(devices)))]


def _synchronize(domains):
    for dev in {d.device.name: d.device for d in domains}.values():
        with simt.use_device(dev):
            simt.synchronize()


def exchange(domains):
    """The halo exchange between consecutive parts (and the last and the first: periodic)
    by device-to-device copies (peer copies between GPUs); one part exchanges with itself."""
    n = len(domains)
    for i, d in enumerate(domains):
        d.first_row().copy_to_device(domains[(i - 1) % n].bottom_halo())
        d.last_row().copy_to_device(domains[(i + 1) % n].top_halo())


def solve(domains, iterations, nccheck=1):
    """Run ``iterations`` sweeps over ``domains`` (a whole grid, in row order); every
    ``nccheck`` iterations and at the last, record the residual norm. Returns the list of
    (iteration, norm)."""
    norms = []
    for it in range(iterations):
        check = it % nccheck == 0 or it == iterations - 1
        for d in domains:
            d.step(check)
        _synchronize(domains)             # every part's rows are written before they move
        exchange(domains)
        _synchronize(domains)
        if check:
            norms.append((it, math.sqrt(sum(float(d.l2.copy_to_host()[0]) for d in domains))))
        for d in domains:
            d.swap()
    return norms


def gather(domains):
    """The whole grid's interior rows (host) from the parts, in order."""
    return np.concatenate([d.interior() for d in domains])


def reference(a, iterations):
    """NumPy's Jacobi on a (ny, nx) grid whose edges are set: the same sums in the same order,
    periodic in y through rows 0 and ny-1."""
    a, a_new = a.copy(), a.copy()
    for _ in range(iterations):
        a_new[1:-1, 1:-1] = 0.25 * (a[1:-1, 2:] + a[1:-1, :-2] + a[2:, 1:-1] + a[:-2, 1:-1])
        a_new[0], a_new[-1] = a_new[-2], a_new[1]
        a, a_new = a_new, a
    return a


def part_devices(parts=None):
    """The devices the parts run on: every GPU when there are two or more, else the current
    device once per part (two parts unless told)."""
    gpus = [d for d in simt.devices() if d.kind == "cuda"]
    if len(gpus) >= 2 and simt.get_device().kind == "cuda":
        return gpus if parts is None else [gpus[i % len(gpus)] for i in range(parts)]
    return [simt.get_device()] * (parts or 2)


def timed_solve(nx, ny, devices, iterations, nccheck):
    """(seconds, norms, domains): make the parts, warm up (compile), then time the solve."""
    solve(make_domains(nx, ny, devices), 1)
    domains = make_domains(nx, ny, devices)
    _synchronize(domains)
    start = time.perf_counter()
    norms = solve(domains, iterations, nccheck)
    return time.perf_counter() - start, norms, domains


def main(device=None, out_dir=None, nx=1024, ny=1024, iterations=200, nccheck=50):
    devices = part_devices()
    shared = len({d.name for d in devices}) == 1
    print(f"Jacobi relaxation: {iterations} iterations on {ny} x {nx} mesh, "
          f"{len(devices)} parts on {', '.join(d.name for d in devices)}"
          + (" (one device partitioned: checks the halo exchange, not a speed-up)" if shared else ""))
    t1, norms1, single = timed_solve(nx, ny, devices[:1], iterations, nccheck)
    tn, norms, parts = timed_solve(nx, ny, devices, iterations, nccheck)
    for (it, norm) in norms:
        print(f"{it:5d}, {norm:.6f}")
    same = np.array_equal(gather(single), gather(parts))
    close = all(math.isclose(a[1], b[1], rel_tol=1e-12) for a, b in zip(norms1, norms))
    print(f"{ny}x{nx}: 1 part: {t1:8.4f} s, {len(devices)} parts: {tn:8.4f} s, "
          f"speedup: {t1 / tn:8.2f}, efficiency: {t1 / tn / len(devices) * 100:8.2f}%")
    print("solution bit-identical to the one-device solve" if same and close else
          "MISMATCH against the one-device solve")
    return same and close
