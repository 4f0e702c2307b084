# The same launch mistakes through CuPy's driver API path, and an NVRTC compile error.
import sys, cupy
what = sys.argv[1]
src = r'''extern "C" __global__ void k(float* x){x[threadIdx.x] = 1.0f;}'''
if what == "nvrtc":
    src = r'''extern "C" __global__ void k(float* x){x[threadIdx.x] = undefined_name;}'''
k = cupy.RawKernel(src, "k")
x = cupy.zeros(4096, dtype=cupy.float32)
if what == "block":
    k((1,), (2048,), (x,))
elif what == "wild":
    k((1,), (32,), (cupy.uint64(0x7f0000000000),))
else:
    k((1,), (32,), (x,))
cupy.cuda.Device().synchronize()
print(float(x.sum()))
