/* Headless stand-in for CUDA by Example's common/cpu_bitmap.h (not printed in the book):
 * the same class and methods; display_and_exit() shows nothing and returns. */
#ifndef SIMT_BENCH_CPU_BITMAP_H
#define SIMT_BENCH_CPU_BITMAP_H
#include <stdlib.h>

struct CPUBitmap {
    unsigned char *pixels;
    int x, y;
    void *dataBlock;
    void (*bitmapExit)(void *);

    CPUBitmap(int width, int height, void *d = NULL)
        : pixels(new unsigned char[width * height * 4]), x(width), y(height), dataBlock(d),
          bitmapExit(NULL) {}
    ~CPUBitmap() { delete[] pixels; }
    unsigned char *get_ptr(void) const { return pixels; }
    long image_size(void) const { return (long)x * y * 4; }
    void display_and_exit(void (*e)(void *) = NULL) {
        if (e != NULL) e(dataBlock);
    }
};
#endif
