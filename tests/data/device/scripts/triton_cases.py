import sys, torch, triton, triton.language as tl
@triton.jit
def big_smem(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.dot(a, a)
    tl.store(x_ptr + offs[:, None] * BLOCK + offs[None, :], b)
@triton.jit
def bad_store(x_ptr, n):
    offs = tl.arange(0, 128)
    tl.store(x_ptr + offs + (1 << 40), tl.zeros((128,), tl.float32))
if sys.argv[1] == "smem":
    x = torch.randn(512 * 512, device="cuda", dtype=torch.float16)
    big_smem[(1,)](x, BLOCK=512)
    torch.cuda.synchronize()
else:
    x = torch.zeros(128, device="cuda")
    bad_store[(1,)](x, 128)
    torch.cuda.synchronize()
    print(x.sum())
