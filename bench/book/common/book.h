/* Headless stand-in for CUDA by Example's common/book.h, which the book uses but does not
 * print (written for simt's bench from what the book says it provides; not the original).
 * Also maps two runtime names CUDA 12 removed, so the book's sources build unedited:
 * cudaThreadSynchronize (now cudaDeviceSynchronize) and cudaDeviceProp::deviceOverlap
 * (now asyncEngineCount). */
#ifndef SIMT_BENCH_BOOK_H
#define SIMT_BENCH_BOOK_H
#include <stdio.h>
#include <stdlib.h>

static void HandleError(cudaError_t err, const char *file, int line) {
    if (err != cudaSuccess) {
        printf("%s in %s at line %d\n", cudaGetErrorString(err), file, line);
        exit(EXIT_FAILURE);
    }
}
#define HANDLE_ERROR(err) (HandleError((err), __FILE__, __LINE__))
#define HANDLE_NULL(a) { if ((a) == NULL) { \
    printf("Host memory failed in %s at line %d\n", __FILE__, __LINE__); exit(EXIT_FAILURE); } }

#define cudaThreadSynchronize cudaDeviceSynchronize
#define deviceOverlap asyncEngineCount

template <typename T> void swap(T &a, T &b) { T t = a; a = b; b = t; }

static void *big_random_block(int size) {
    unsigned char *data = (unsigned char *)malloc(size);
    HANDLE_NULL(data);
    for (int i = 0; i < size; i++) data[i] = rand();
    return data;
}

static int *big_random_block_int(int size) {
    int *data = (int *)malloc(size * sizeof(int));
    HANDLE_NULL(data);
    for (int i = 0; i < size; i++) data[i] = rand();
    return data;
}

/* A temperature in [0, 1] to a colour: HSL with lightness = the value, full saturation,
 * hue 180 + 360 * value degrees (the computation simt's examples/book.py does). */
__device__ unsigned char value(float n1, float n2, int hue) {
    if (hue > 360) hue -= 360;
    else if (hue < 0) hue += 360;
    if (hue < 60) return (unsigned char)(255 * (n1 + (n2 - n1) * hue / 60));
    if (hue < 180) return (unsigned char)(255 * n2);
    if (hue < 240) return (unsigned char)(255 * (n1 + (n2 - n1) * (240 - hue) / 60));
    return (unsigned char)(255 * n1);
}

__global__ void float_to_color(unsigned char *optr, const float *outSrc) {
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int offset = x + y * blockDim.x * gridDim.x;
    float l = outSrc[offset], s = 1;
    int h = (180 + (int)(360.0f * outSrc[offset])) % 360;
    float m2 = l <= 0.5f ? l * (1 + s) : l + s - l * s;
    float m1 = 2 * l - m2;
    optr[offset * 4 + 0] = value(m1, m2, h + 120);
    optr[offset * 4 + 1] = value(m1, m2, h);
    optr[offset * 4 + 2] = value(m1, m2, h - 120);
    optr[offset * 4 + 3] = 255;
}
#endif
