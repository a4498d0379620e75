// The Jacobi solver of simt.examples.jacobi_mpi --comm nccl in CUDA C: one MPI rank per
// GPU, the same kernels (32 x 8 blocks, float64, the block's squared changes summed in
// shared memory and added atomically), the same split of the rows, the same loop (sweep;
// halo exchange with ncclSend/ncclRecv in one group; every nccheck iterations and at the
// last, the norm summed with ncclAllReduce and copied to the host), all on the legacy
// default stream as simt's. bench/jacobi_scaling.py --reference builds and runs it.
// Prints the same JSON record as jacobi_mpi (its last line).
//
//   mpiexec -n N jacobi_nccl --nx 16384 --ny 16384 --iterations 1000 --nccheck 100 [--weak]
#include <mpi.h>
#include <nccl.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

// NVIDIA's jacobi_nccl marks the arrays __restrict__; -DNO_RESTRICT builds the variant
// without (simt cannot promise that a kernel's arrays do not alias: the same array may be
// passed twice), to see what the promise is worth.
#ifdef NO_RESTRICT
#define RESTRICT
#else
#define RESTRICT __restrict__
#endif

#define BLOCK_X 32
#define BLOCK_Y 8
#define THREADS (BLOCK_X * BLOCK_Y)

#define CHECK_CUDA(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define CHECK_NCCL(call) do { ncclResult_t r = (call); if (r != ncclSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, ncclGetErrorString(r)); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

__global__ void initialize_boundaries(double *a_new, double *a, long long offset, long long ny,
                                      int rows_with_halos, int nx) {
    const double two_pi = 2.0 * M_PI;
    for (int iy = blockIdx.x * blockDim.x + threadIdx.x; iy < rows_with_halos; iy += blockDim.x * gridDim.x) {
        double y0 = sin(two_pi * (offset + iy) / (ny - 1));
        a[(size_t)iy * nx] = y0;
        a[(size_t)iy * nx + nx - 1] = y0;
        a_new[(size_t)iy * nx] = y0;
        a_new[(size_t)iy * nx + nx - 1] = y0;
    }
}

__global__ void jacobi_kernel(double *RESTRICT a_new, const double *RESTRICT a,
                              double *RESTRICT l2_norm, long long iy_start, long long iy_end,
                              int nx, int calculate_norm) {
    __shared__ double cache[THREADS];
    long long iy = blockIdx.y * blockDim.y + threadIdx.y + iy_start;
    int ix = blockIdx.x * blockDim.x + threadIdx.x + 1;
    double residue = 0.0;
    if (iy < iy_end && ix < nx - 1) {
        double new_val = 0.25 * (a[iy * nx + ix + 1] + a[iy * nx + ix - 1] +
                                 a[(iy + 1) * nx + ix] + a[(iy - 1) * nx + ix]);
        a_new[iy * nx + ix] = new_val;
        double change = new_val - a[iy * nx + ix];
        residue = change * change;
    }
    if (calculate_norm) {
        int t = threadIdx.y * blockDim.x + threadIdx.x;
        cache[t] = residue;
        __syncthreads();
        for (int i = THREADS / 2; i != 0; i /= 2) {
            if (t < i) cache[t] += cache[t + i];
            __syncthreads();
        }
        if (t == 0) atomicAdd(l2_norm, cache[0]);
    }
}

struct Domain {
    int nx, rows;
    double *a, *a_new, *l2;
};

static void chunk(long long ny, int parts, int part, long long *first, int *rows) {
    long long interior = ny - 2, low = interior / parts;
    long long n_low = parts * (low + 1) - interior, start = 1;
    for (int p = 0; p < parts; p++) {
        long long r = p < n_low ? low : low + 1;
        if (p == part) { *first = start; *rows = (int)r; return; }
        start += r;
    }
}

static Domain make_domain(int nx, long long ny, int rank, int size) {
    Domain d;
    long long first;
    chunk(ny, size, rank, &first, &d.rows);
    d.nx = nx;
    size_t bytes = (size_t)(d.rows + 2) * nx * sizeof(double);
    CHECK_CUDA(cudaMalloc(&d.a, bytes));
    CHECK_CUDA(cudaMalloc(&d.a_new, bytes));
    CHECK_CUDA(cudaMalloc(&d.l2, sizeof(double)));
    CHECK_CUDA(cudaMemset(d.a, 0, bytes));
    CHECK_CUDA(cudaMemset(d.a_new, 0, bytes));
    CHECK_CUDA(cudaMemset(d.l2, 0, sizeof(double)));
    initialize_boundaries<<<(d.rows + 2 + 127) / 128, 128>>>(d.a_new, d.a, first - 1, ny, d.rows + 2, nx);
    CHECK_CUDA(cudaGetLastError());
    return d;
}

static void free_domain(Domain &d) {
    cudaFree(d.a); cudaFree(d.a_new); cudaFree(d.l2);
}

static void step(Domain &d, bool norm) {
    if (norm) CHECK_CUDA(cudaMemsetAsync(d.l2, 0, sizeof(double), 0));
    dim3 grid((d.nx - 2 + BLOCK_X - 1) / BLOCK_X, (d.rows + BLOCK_Y - 1) / BLOCK_Y);
    jacobi_kernel<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(d.a_new, d.a, d.l2, 1, d.rows + 1, d.nx, norm);
}

static void exchange(Domain &d, ncclComm_t comm, int top, int bottom) {
    size_t nx = d.nx;
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(d.a_new + 1 * nx, nx, ncclDouble, top, comm, 0));
    CHECK_NCCL(ncclRecv(d.a_new + (d.rows + 1) * nx, nx, ncclDouble, bottom, comm, 0));
    CHECK_NCCL(ncclSend(d.a_new + d.rows * nx, nx, ncclDouble, bottom, comm, 0));
    CHECK_NCCL(ncclRecv(d.a_new, nx, ncclDouble, top, comm, 0));
    CHECK_NCCL(ncclGroupEnd());
}

static std::vector<std::pair<int, double>> solve(Domain &d, ncclComm_t comm, int top, int bottom,
                                                 int iterations, int nccheck) {
    std::vector<std::pair<int, double>> norms;
    for (int it = 0; it < iterations; it++) {
        bool check = it % nccheck == 0 || it == iterations - 1;
        step(d, check);
        exchange(d, comm, top, bottom);
        if (check) {
            CHECK_NCCL(ncclAllReduce(d.l2, d.l2, 1, ncclDouble, ncclSum, comm, 0));
            double l2;
            CHECK_CUDA(cudaMemcpy(&l2, d.l2, sizeof(double), cudaMemcpyDeviceToHost));
            norms.push_back({it, sqrt(l2)});
        }
        std::swap(d.a, d.a_new);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    return norms;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nx = 1024, iterations = 200, nccheck = 50, halo_repeats = 20, weak = 0;
    long long ny = 1024;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nx") && i + 1 < argc) nx = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ny") && i + 1 < argc) ny = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nccheck") && i + 1 < argc) nccheck = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--halo-repeats") && i + 1 < argc) halo_repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--weak")) weak = 1;
        else { if (rank == 0) fprintf(stderr, "unknown argument %s\n", argv[i]); MPI_Abort(MPI_COMM_WORLD, 2); }
    }
    if (weak) ny = (ny - 2) * size + 2;

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local, gpus;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    CHECK_CUDA(cudaGetDeviceCount(&gpus));
    CHECK_CUDA(cudaSetDevice(local % gpus));
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, local % gpus));

    ncclUniqueId id;
    if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    CHECK_NCCL(ncclCommInitRank(&comm, size, id, rank));
    int top = (rank - 1 + size) % size, bottom = (rank + 1) % size;

    Domain warm = make_domain(nx, ny, rank, size);         // connect and warm up, untimed
    solve(warm, comm, top, bottom, 1, nccheck);
    free_domain(warm);
    Domain d = make_domain(nx, ny, rank, size);
    CHECK_CUDA(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    std::vector<std::pair<int, double>> norms = solve(d, comm, top, bottom, iterations, nccheck);
    MPI_Barrier(MPI_COMM_WORLD);
    double mine = MPI_Wtime() - start, seconds;
    MPI_Allreduce(&mine, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    double per_exchange = 0.0;
    if (halo_repeats > 0) {
        CHECK_CUDA(cudaDeviceSynchronize());
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int r = 0; r < halo_repeats; r++) exchange(d, comm, top, bottom);
        CHECK_CUDA(cudaDeviceSynchronize());
        double t = (MPI_Wtime() - t0) / halo_repeats;
        MPI_Allreduce(&t, &per_exchange, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        printf("Jacobi relaxation (CUDA C, NCCL): %d iterations on %lld x %d mesh, %d ranks on %s\n",
               iterations, ny, nx, size, prop.name);
        for (auto &n : norms) printf("%5d, %.6f\n", n.first, n.second);
        printf("{\"ranks\": %d, \"comm\": \"nccl (CUDA C)\", \"device\": \"%s\", \"nx\": %d, "
               "\"ny\": %lld, \"weak\": %s, \"iterations\": %d, \"seconds\": %.9f, "
               "\"exchange_seconds\": %.9f, \"halo_bytes_sent_per_rank\": %d, \"check\": null, "
               "\"norm\": %.12f}\n", size, prop.name, nx, ny, weak ? "true" : "false", iterations,
               seconds, per_exchange, 2 * nx * 8, norms.empty() ? 0.0 : norms.back().second);
    }
    free_domain(d);
    ncclCommDestroy(comm);
    MPI_Finalize();
    return 0;
}
