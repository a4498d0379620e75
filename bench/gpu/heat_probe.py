"""Where a frame of the book's heat program (7.3.3) goes, simt against CUDA C, in one run:

- frame: the book's timed frame (90 steps of copy_const + blend, float_to_color, the
  bitmap copied to the host), events around it, mean of 30 frames after 3;
- enqueue: host microseconds per launch while queueing one frame's 180 step launches
  (perf_counter around the loop, before synchronizing);
- steps: events around those 90 steps;
- graph: the same 90 steps captured into a graph and replayed (the GPU's own time, with
  little host cost in it);
- empty: host microseconds per launch of an empty <<<1, 1>>> kernel, 10,000 launches.

simt runs its example's kernels (src/simt/examples/heat.py) for the three versions; C the
book's global-memory kernels. PYTHONPATH=src python3 bench/gpu/heat_probe.py [out.json]
"""
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import simt
from simt.examples import heat

FRAMES = 30


def simt_rows(version):
    sim = heat.Simulation(version)
    for _ in range(3):
        sim.frame()
    start, stop = simt.Event(), simt.Event()
    frames = []
    for _ in range(FRAMES):
        start.record()
        sim.frame()
        stop.record()
        stop.synchronize()
        frames.append(start.elapsed_time(stop))
    enqueue, steps = [], []
    for _ in range(FRAMES):
        simt.synchronize()
        start.record()
        began = time.perf_counter()
        _steps(sim)
        enqueue.append((time.perf_counter() - began) / 180 * 1e6)
        stop.record()
        stop.synchronize()
        steps.append(start.elapsed_time(stop))
    stream = simt.Stream()
    with stream.capture() as graph:
        _steps(sim, stream)
    exe = graph.instantiate()
    graphs = []
    for _ in range(FRAMES):
        start.record(stream)
        exe.launch(stream)
        stop.record(stream)
        stop.synchronize()
        graphs.append(start.elapsed_time(stop))
    return {"frame_ms": statistics.mean(frames), "enqueue_us": statistics.median(enqueue),
            "steps_ms": statistics.median(steps), "graph_ms": statistics.median(graphs)}


def _steps(sim, stream=None):
    """The frame's 90 steps as Simulation.frame queues them (on ``stream``): each
    version's two launch configurations made once, then the launches and swaps."""
    blocks, threads = (sim.dim // 16, sim.dim // 16), (16, 16)
    cfg = (blocks, threads) if stream is None else (blocks, threads, 0, stream)
    src, dst, dim = sim.inp, sim.out, sim.dim
    if sim.version == "global":
        copy, blend = heat.copy_const_kernel[cfg], heat.blend_kernel[cfg]
        for _ in range(heat.STEPS):
            copy(src, sim.const)
            blend(dst, src, dim)
            src, dst = dst, src
        return
    tex_in, tex_out = sim.tex_in, sim.tex_out
    tex1d = sim.version == "tex1d"
    copy = (heat.copy_const_tex1d if tex1d else heat.copy_const_tex2d)[cfg]
    blend = (heat.blend_tex1d if tex1d else heat.blend_tex2d)[cfg]
    for _ in range(heat.STEPS):
        copy(src, sim.tex_const)
        if tex1d:
            blend(dst, tex_in, dim)
        else:
            blend(dst, tex_in)
        src, dst, tex_in, tex_out = dst, src, tex_out, tex_in


def simt_empty():
    @simt.kernel
    def empty(a):
        pass
    buf = simt.zeros(4, np.float32)
    for _ in range(100):
        empty[1, 1](buf)
    simt.synchronize()
    began = time.perf_counter()
    for _ in range(10000):
        empty[1, 1](buf)
    took = time.perf_counter() - began
    simt.synchronize()
    return took / 10000 * 1e6


C_SOURCE = r"""
#include <cstdio>
#include <chrono>
#include <vector>
#include <algorithm>
#define DIM 1024
#define SPEED 0.25f
__global__ void copy_const_kernel(float *iptr, const float *cptr) {
  int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
  int offset = x + y * blockDim.x * gridDim.x;
  if (cptr[offset] != 0) iptr[offset] = cptr[offset];
}
__global__ void blend_kernel(float *outSrc, const float *inSrc) {
  int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
  int offset = x + y * blockDim.x * gridDim.x;
  int left = offset - 1, right = offset + 1;
  if (x == 0) left++;
  if (x == DIM-1) right--;
  int top = offset - DIM, bottom = offset + DIM;
  if (y == 0) top += DIM;
  if (y == DIM-1) bottom -= DIM;
  outSrc[offset] = inSrc[offset] + SPEED * (inSrc[top] + inSrc[bottom] + inSrc[left]
                   + inSrc[right] - inSrc[offset]*4);
}
__global__ void float_to_color(unsigned char *optr, const float *outSrc) {
  int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
  int offset = x + y * blockDim.x * gridDim.x;
  unsigned char v = (unsigned char)(255 * outSrc[offset]);
  optr[offset*4] = v; optr[offset*4+1] = v; optr[offset*4+2] = v; optr[offset*4+3] = 255;
}
__global__ void empty(float *a) {}
static float *in, *out, *cst; static unsigned char *bmp;
static dim3 blocks(DIM/16, DIM/16), threads(16, 16);
static void steps(cudaStream_t s) {
  for (int i = 0; i < 90; i++) {
    copy_const_kernel<<<blocks, threads, 0, s>>>(in, cst);
    blend_kernel<<<blocks, threads, 0, s>>>(out, in);
    std::swap(in, out);
  }
}
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size()/2]; }
int main() {
  size_t n = DIM * DIM;
  cudaMalloc(&in, n*4); cudaMalloc(&out, n*4); cudaMalloc(&cst, n*4); cudaMalloc(&bmp, n*4);
  cudaMemset(in, 0, n*4); cudaMemset(cst, 0, n*4);
  unsigned char *pixels = (unsigned char*)malloc(n*4);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<double> frames, enq, st, gr; float ms;
  for (int f = 0; f < 33; f++) {
    cudaEventRecord(a, 0); steps(0); float_to_color<<<blocks, threads>>>(bmp, in);
    cudaMemcpy(pixels, bmp, n*4, cudaMemcpyDeviceToHost);
    cudaEventRecord(b, 0); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b);
    if (f >= 3) frames.push_back(ms);
  }
  for (int f = 0; f < 30; f++) {
    cudaDeviceSynchronize(); cudaEventRecord(a, 0);
    auto t0 = std::chrono::steady_clock::now(); steps(0);
    auto t1 = std::chrono::steady_clock::now();
    cudaEventRecord(b, 0); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b);
    enq.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 180);
    st.push_back(ms);
  }
  cudaStream_t s; cudaStreamCreate(&s); cudaGraph_t g; cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); steps(s); cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&ge, g, 0);
  for (int f = 0; f < 30; f++) {
    cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s);
    cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); gr.push_back(ms);
  }
  for (int i = 0; i < 100; i++) empty<<<1, 1>>>(in);
  cudaDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10000; i++) empty<<<1, 1>>>(in);
  auto t1 = std::chrono::steady_clock::now();
  cudaDeviceSynchronize();
  double fsum = 0; for (double x : frames) fsum += x;
  printf("%f %f %f %f %f\n", fsum / frames.size(), med(enq), med(st), med(gr),
         std::chrono::duration<double, std::micro>(t1 - t0).count() / 10000);
  return cudaGetLastError() != cudaSuccess;
}
"""


def c_rows():
    with tempfile.TemporaryDirectory() as folder:
        src, exe = os.path.join(folder, "heat.cu"), os.path.join(folder, "heat")
        with open(src, "w") as f:
            f.write(C_SOURCE)
        subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-o", exe, src], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split()
    frame, enqueue, steps, graph, empty = map(float, out)
    return {"frame_ms": frame, "enqueue_us": enqueue, "steps_ms": steps, "graph_ms": graph,
            "empty_us": empty}


def main():
    rows = {"C (global)": c_rows()}
    print("C (global)", rows["C (global)"], flush=True)
    for version in ("global", "tex1d", "tex2d"):
        rows[f"simt ({version})"] = simt_rows(version)
        print(f"simt ({version})", rows[f"simt ({version})"], flush=True)
    rows["simt (global)"]["empty_us"] = simt_empty()
    print("simt empty", rows["simt (global)"]["empty_us"])
    result = {"device": simt.get_device().name, "date": str(datetime.date.today()), "rows": rows}
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
