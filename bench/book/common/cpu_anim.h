/* Headless stand-in for CUDA by Example's common/cpu_anim.h (not printed in the book): the
 * same class and methods; anim_and_exit() calls the frame function BOOK_FRAMES times (the
 * environment variable; default 100) instead of at every GLUT idle, then the exit one. */
#ifndef SIMT_BENCH_CPU_ANIM_H
#define SIMT_BENCH_CPU_ANIM_H
#include <stdlib.h>

struct CPUAnimBitmap {
    unsigned char *pixels;
    int width, height;
    void *dataBlock;

    CPUAnimBitmap(int w, int h, void *d = NULL)
        : pixels(new unsigned char[w * h * 4]), width(w), height(h), dataBlock(d) {}
    ~CPUAnimBitmap() { delete[] pixels; }
    unsigned char *get_ptr(void) const { return pixels; }
    long image_size(void) const { return (long)width * height * 4; }
    void click_drag(void (*)(void *, int, int, int, int)) {}
    void anim_and_exit(void (*f)(void *, int), void (*e)(void *)) {
        const char *env = getenv("BOOK_FRAMES");
        int frames = env ? atoi(env) : 100;
        for (int ticks = 1; ticks <= frames; ticks++) f(dataBlock, ticks);
        if (e != NULL) e(dataBlock);
    }
};
#endif
