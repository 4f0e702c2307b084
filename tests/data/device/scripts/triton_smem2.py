import torch, triton, triton.language as tl
@triton.jit
def mm(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM); rn = tl.arange(0, BN); rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)
BM = BN = 256; BK = 128; K = 1024
a = torch.randn(BM, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, BN, device="cuda", dtype=torch.float16)
c = torch.empty(BM, BN, device="cuda", dtype=torch.float32)
mm[(1,)](a, b, c, K, BM=BM, BN=BN, BK=BK, num_stages=6)
torch.cuda.synchronize()
