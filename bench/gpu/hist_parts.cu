// CUDA by Example's shared-atomics histogram (ch09_hist_gpu_shmem_atomics.cu) with an
// event after each step, for bench/gpu/hist_parts.py: prints one JSON line of
// milliseconds per part. Data: rand() bytes as book.h's big_random_block.
#include <cstdio>
#include <cstdlib>
#define SIZE (100 * 1024 * 1024)

__global__ void histo_kernel(unsigned char *buffer, long size, unsigned int *histo) {
    __shared__ unsigned int temp[256];
    temp[threadIdx.x] = 0;
    __syncthreads();
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int offset = blockDim.x * gridDim.x;
    while (i < size) {
        atomicAdd(&temp[buffer[i]], 1);
        i += offset;
    }
    __syncthreads();
    atomicAdd(&(histo[threadIdx.x]), temp[threadIdx.x]);
}

int main() {
    unsigned char *buffer = (unsigned char *)malloc(SIZE);
    for (int i = 0; i < SIZE; i++) buffer[i] = rand();
    cudaEvent_t ev[6];
    for (int k = 0; k < 6; k++) cudaEventCreate(&ev[k]);
    cudaEventRecord(ev[0], 0);
    unsigned char *dev_buffer;
    unsigned int *dev_histo;
    cudaMalloc((void **)&dev_buffer, SIZE);
    cudaEventRecord(ev[1], 0);
    cudaMemcpy(dev_buffer, buffer, SIZE, cudaMemcpyHostToDevice);
    cudaEventRecord(ev[2], 0);
    cudaMalloc((void **)&dev_histo, 256 * sizeof(long));
    cudaMemset(dev_histo, 0, 256 * sizeof(int));
    cudaEventRecord(ev[3], 0);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    histo_kernel<<<prop.multiProcessorCount * 2, 256>>>(dev_buffer, SIZE, dev_histo);
    cudaEventRecord(ev[4], 0);
    unsigned int histo[256];
    cudaMemcpy(histo, dev_histo, 256 * sizeof(int), cudaMemcpyDeviceToHost);
    cudaEventRecord(ev[5], 0);
    cudaEventSynchronize(ev[5]);
    float ms[5], total;
    for (int k = 0; k < 5; k++) cudaEventElapsedTime(&ms[k], ev[k], ev[k + 1]);
    cudaEventElapsedTime(&total, ev[0], ev[5]);
    long count = 0;
    for (int i = 0; i < 256; i++) count += histo[i];
    printf("{\"side\": \"nvcc\", \"malloc\": %.3f, \"copy in\": %.3f, \"bins\": %.3f, "
           "\"kernel\": %.3f, \"copy out\": %.3f, \"total\": %.3f, \"sum\": %ld}\n",
           ms[0], ms[1], ms[2], ms[3], ms[4], total, count);
    return count == SIZE ? 0 : 1;
}
