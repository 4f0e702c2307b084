import sys, cupy
mod = cupy.RawModule(path=sys.argv[1])
k = mod.get_function("k")
x = cupy.zeros(128, dtype=cupy.float32)
k((1,), (128,), (x,))
cupy.cuda.Device().synchronize()
print(x.sum())
