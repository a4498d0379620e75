// Device code for tests/test_linking.py: extern "C" keeps the names unmangled, so
// simt.declare_device("my_fma", ...) finds them.
extern "C" __device__ float my_fma(float a, float b, float c)
{
    return a * b + c;
}

extern "C" __device__ float scaled_at(int i, const float* p)
{
    return 2.0f * p[i];
}

extern "C" __device__ void add_to(float* out, int i, double v)
{
    out[i] += (float)v;
}
