# Everyday GPU-side misuse that reaches serving logs: fork after CUDA init, mixed devices,
# sampling from a broken distribution, a failed factorisation, mixed dtypes, a lone rank.
import os, sys, torch
what = sys.argv[1]
if what == "fork":
    import multiprocessing as mp
    torch.zeros(1, device="cuda")
    def child() -> None:
        torch.zeros(1, device="cuda")
    p = mp.get_context("fork").Process(target=child)
    p.start(); p.join()
    print("child exit", p.exitcode)
elif what == "devices":
    torch.randn(4, 4, device="cuda") @ torch.randn(4, 4)
elif what == "multinomial":
    probs = torch.tensor([[0.5, float("nan"), 0.5]], device="cuda")
    print(torch.multinomial(probs, 1))
    torch.cuda.synchronize()
elif what == "cholesky":
    torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]], device="cuda"))
elif what == "dtype":
    torch.randn(4, 4, device="cuda", dtype=torch.bfloat16) @ torch.randn(4, 4, device="cuda")
elif what == "store":     # rank 0 of 2; rank 1 never comes
    import datetime, torch.distributed as dist
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29540", rank=0, world_size=2,
                            timeout=datetime.timedelta(seconds=15))
elif what == "inductor":  # CPU code under torch.compile with no usable C++ compiler
    f = torch.compile(lambda t: torch.sin(t) * 2 + 1)
    print(f(torch.randn(16)).sum())
elif what == "triton_arange":
    import triton, triton.language as tl
    @triton.jit
    def k(x_ptr):
        offs = tl.arange(0, 100)
        tl.store(x_ptr + offs, tl.zeros((100,), tl.float32))
    x = torch.zeros(128, device="cuda")
    k[(1,)](x)
    torch.cuda.synchronize()
print("finished", what)
