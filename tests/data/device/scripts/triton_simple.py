import torch, triton, triton.language as tl
@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1, mask=m)
x = torch.zeros(1000, device="cuda")
add_one[(4,)](x, 1000, BLOCK=256)
torch.cuda.synchronize()
print("ok", x.sum().item())
