/* Texture references for the book's chapter 7 heat programs, which CUDA 12 removed
 * (texture<T>, cudaBindTexture, cudaBindTexture2D, cudaUnbindTexture), rebuilt on texture
 * objects so the sources build unedited: `texture<float> t;` becomes a __device__ global
 * holding a cudaTextureObject_t that binding fills (cudaMemcpyToSymbol), and
 * tex1Dfetch(t, i) / tex2D(t, x, y) fetch through it. A fetch reads the handle from global
 * memory first (one cached load), which a real texture reference did not need.
 * Force-included (nvcc -include) for those programs only: it defines `texture`. */
#ifndef SIMT_BENCH_TEXREF_SHIM_H
#define SIMT_BENCH_TEXREF_SHIM_H
#include <cuda_runtime.h>
#include <string.h>

template <class T, int dims = 1, int mode = 0> struct simt_texref { cudaTextureObject_t obj; };
#define texture __device__ simt_texref

template <class T, int d, int m> __device__ T tex1Dfetch(const simt_texref<T, d, m> &r, int i) {
    return tex1Dfetch<T>(r.obj, i);
}
template <class T, int d, int m> __device__ T tex2D(const simt_texref<T, d, m> &r, float x, float y) {
    return tex2D<T>(r.obj, x, y);
}

template <class T, int d, int m>
static cudaError_t simt_bind(simt_texref<T, d, m> &ref, cudaResourceDesc &res) {
    cudaTextureDesc tex;
    memset(&tex, 0, sizeof tex);
    tex.readMode = cudaReadModeElementType;
    tex.addressMode[0] = tex.addressMode[1] = cudaAddressModeClamp;
    tex.filterMode = cudaFilterModePoint;
    cudaTextureObject_t obj;
    cudaError_t err = cudaCreateTextureObject(&obj, &res, &tex, NULL);
    if (err != cudaSuccess) return err;
    return cudaMemcpyToSymbol(ref, &obj, sizeof obj);
}

template <class T, int d, int m>
static cudaError_t cudaBindTexture(size_t *offset, simt_texref<T, d, m> &ref,
                                                      const void *ptr, size_t size) {
    if (offset) *offset = 0;
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = (void *)ptr;
    res.res.linear.desc = cudaCreateChannelDesc<T>();
    res.res.linear.sizeInBytes = size;
    return simt_bind(ref, res);
}

template <class T, int d, int m>
static cudaError_t cudaBindTexture2D(size_t *offset, simt_texref<T, d, m> &ref,
                                                        const void *ptr,
                                                        const cudaChannelFormatDesc &desc,
                                                        size_t width, size_t height,
                                                        size_t pitch) {
    if (offset) *offset = 0;
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = (void *)ptr;
    res.res.pitch2D.desc = desc;
    res.res.pitch2D.width = width;
    res.res.pitch2D.height = height;
    res.res.pitch2D.pitchInBytes = pitch;
    return simt_bind(ref, res);
}

template <class T, int d, int m> static cudaError_t cudaUnbindTexture(simt_texref<T, d, m> &ref) {
    cudaTextureObject_t obj;
    cudaError_t err = cudaMemcpyFromSymbol(&obj, ref, sizeof obj);
    return err != cudaSuccess ? err : cudaDestroyTextureObject(obj);
}
#endif
