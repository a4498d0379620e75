// Host time of one kernel launch by each way the CUDA C runtime and driver offer, on
// the same machine in one run: which entry is cheapest for simt's native launch function
// to call. Heat's launch shape ((64, 64) blocks of (16, 16) threads, three parameters: two
// pointers and an int), queued in batches of 180 (a heat frame's steps) and synchronized
// outside the timing, so the queue never fills and the figure is host time. Median of
// ROUNDS rounds, each round taking the paths in another order.
//
//   nvcc -O3 -arch=sm_90 -o launch_paths launch_paths.cu -lcuda && ./launch_paths
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define DK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char *s; \
    cuGetErrorString(e, &s); printf("%s: %s\n", #x, s); exit(1); } } while (0)

// one thread writes n to dst[1] (as int bits): each batch checks that its launches ran
// with their parameters
__global__ void step(float *dst, const float *src, int n) {
    if ((threadIdx.x | threadIdx.y | blockIdx.x | blockIdx.y) == 0) ((int *)dst)[1] = n;
}

// the same kernel as PTX, loaded by the driver as simt loads its kernels
static const char *PTX =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry step(.param .u64 dst, .param .u64 src, .param .u32 n)\n{\n"
    "    .reg .b32 %r<4>;\n    .reg .b64 %rd<3>;\n    .reg .pred %p<2>;\n"
    "    mov.u32 %r1, %tid.x;\n    mov.u32 %r2, %tid.y;\n    or.b32 %r1, %r1, %r2;\n"
    "    mov.u32 %r2, %ctaid.x;\n    or.b32 %r1, %r1, %r2;\n"
    "    mov.u32 %r2, %ctaid.y;\n    or.b32 %r1, %r1, %r2;\n"
    "    setp.ne.u32 %p1, %r1, 0;\n    @%p1 bra DONE;\n"
    "    ld.param.u64 %rd1, [dst];\n    cvta.to.global.u64 %rd2, %rd1;\n"
    "    ld.param.u32 %r3, [n];\n    st.global.u32 [%rd2+4], %r3;\n"
    "DONE:\n    ret;\n}\n";

static const int BATCH = 180, BATCHES = 40, ROUNDS = 7;
static const dim3 GRID(64, 64), BLOCK(16, 16);

static double now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef CUresult (*LaunchFn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);

struct Ctx {
    float *a, *b;
    CUfunction from_runtime, from_module, from_library;
    LaunchFn exported, by_proc_address;
    cudaStream_t stream;
};

// one batch by path `p`; returns seconds of host time. Every call's result is checked,
// and the last launch's write (n into b[1]) after the batch.
static double batch(const Ctx &c, int p, int n) {
    float *a = c.a, *b = c.b;
    void *params[3] = {&a, &b, &n};
    char packed[20];                   // the kernel's parameters as the driver lays them out
    memcpy(packed + 16, &n, 4);
    size_t size = sizeof(packed);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CUlaunchConfig cfg = {};
    cfg.gridDimX = 64; cfg.gridDimY = 64; cfg.gridDimZ = 1;
    cfg.blockDimX = 16; cfg.blockDimY = 16; cfg.blockDimZ = 1;
    cfg.hStream = 0;
    cudaStream_t s = (p == 9 || p == 10) ? c.stream : 0;
    int failed = 0;
    double t0 = now();
    for (int i = 0; i < BATCH; ++i) {
        int r = 0;
        params[0] = (i & 1) ? &b : &a;      // heat swaps its arrays every step
        params[1] = (i & 1) ? &a : &b;
        switch (p) {
        case 0: step<<<GRID, BLOCK>>>(i & 1 ? b : a, i & 1 ? a : b, n); break;
        case 1: r = cudaLaunchKernel((const void *)step, GRID, BLOCK, params, 0, 0); break;
        case 2: r = c.exported(c.from_runtime, 64, 64, 1, 16, 16, 1, 0, 0, params, 0); break;
        case 3: r = c.exported(c.from_module, 64, 64, 1, 16, 16, 1, 0, 0, params, 0); break;
        case 4: r = c.exported(c.from_library, 64, 64, 1, 16, 16, 1, 0, 0, params, 0); break;
        case 5: r = c.by_proc_address(c.from_module, 64, 64, 1, 16, 16, 1, 0, 0, params, 0); break;
        case 6: memcpy(packed, i & 1 ? &b : &a, 8); memcpy(packed + 8, i & 1 ? &a : &b, 8);
                r = c.exported(c.from_module, 64, 64, 1, 16, 16, 1, 0, 0, 0, extra); break;
        case 7: r = cuLaunchKernelEx(&cfg, c.from_module, params, 0); break;
        case 8: r = c.exported(c.from_module, 64, 64, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD,
                           params, 0); break;
        case 9: step<<<GRID, BLOCK, 0, s>>>(i & 1 ? b : a, i & 1 ? a : b, n); break;
        case 10: r = c.exported(c.from_module, 64, 64, 1, 16, 16, 1, 0, (CUstream)s, params, 0);
                 break;
        }
        failed |= r;
    }
    double t = now() - t0;
    CK(cudaDeviceSynchronize());
    int wrote[2];
    CK(cudaMemcpy(wrote, b, 8, cudaMemcpyDeviceToHost));
    if (failed || wrote[1] != n) {
        printf("path %d: a launch failed (%d) or did not run with its parameters (%d, %d)\n",
               p, failed, wrote[1], n);
        exit(1);
    }
    return t;
}

static const char *NAMES[] = {
    "runtime <<<>>> (legacy stream)",
    "cudaLaunchKernel",
    "cuLaunchKernel, runtime's CUfunction",
    "cuLaunchKernel, cuModuleLoadData (PTX)",
    "cuLaunchKernel, cuLibrary kernel",
    "cuLaunchKernel from cuGetProcAddress",
    "cuLaunchKernel, extra buffer",
    "cuLaunchKernelEx",
    "cuLaunchKernel, per-thread stream",
    "runtime <<<>>>, created stream",
    "cuLaunchKernel, created stream",
};
static const int PATHS = sizeof(NAMES) / sizeof(NAMES[0]);

int main() {
    Ctx c;
    CK(cudaSetDevice(0));
    CK(cudaMalloc(&c.a, 4096 * 4));
    CK(cudaMalloc(&c.b, 4096 * 4));
    CK(cudaGetFuncBySymbol(&c.from_runtime, (const void *)step));
    CUmodule module;
    DK(cuModuleLoadData(&module, PTX));
    DK(cuModuleGetFunction(&c.from_module, module, "step"));
    CUlibrary library;
    DK(cuLibraryLoadData(&library, PTX, 0, 0, 0, 0, 0, 0));
    CUkernel kernel;
    DK(cuLibraryGetKernel(&kernel, library, "step"));
    c.from_library = (CUfunction)kernel;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    c.exported = (LaunchFn)dlsym(lib, "cuLaunchKernel");
    CUdriverProcAddressQueryResult found;
    DK(cuGetProcAddress("cuLaunchKernel", (void **)&c.by_proc_address, 12000,
                        CU_GET_PROC_ADDRESS_DEFAULT, &found));
    CK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s: host microseconds per launch, batches of %d, median of %d rounds\n",
           prop.name, BATCH, ROUNDS);
    printf("exported cuLaunchKernel %p, cuGetProcAddress's %p\n", (void *)c.exported,
           (void *)c.by_proc_address);
    for (int p = 0; p < PATHS; ++p)             // warm every path
        for (int k = 0; k < 5; ++k) batch(c, p, k);
    std::vector<std::vector<double>> us(PATHS);
    for (int r = 0; r < ROUNDS; ++r)
        for (int q = 0; q < PATHS; ++q) {
            int p = (q + r) % PATHS;
            double t = 0;
            for (int k = 0; k < BATCHES; ++k) t += batch(c, p, 1000 * r + k);
            us[p].push_back(t / (BATCHES * BATCH) * 1e6);
        }
    for (int p = 0; p < PATHS; ++p) {
        std::sort(us[p].begin(), us[p].end());
        printf("%-42s %6.2f  (%.2f-%.2f)\n", NAMES[p], us[p][ROUNDS / 2], us[p][0],
               us[p][ROUNDS - 1]);
    }
    return 0;
}
