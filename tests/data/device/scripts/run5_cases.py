# Fifth device session: determinism checks, a JAX process with no coordinator, a compiled
# function with CUDA graphs over changing shapes (healthy), a CUDA tensor shared with a child
# whose producer exits first.
import os, sys
what = sys.argv[1]
if what == "det_cublas":
    import torch
    torch.use_deterministic_algorithms(True)
    a = torch.randn(64, 64, device="cuda")
    print((a @ a).sum().item())
elif what == "det_index_add":
    import torch
    torch.use_deterministic_algorithms(True)
    x = torch.zeros(8, device="cuda")
    x.index_add_(0, torch.tensor([0, 0, 1], device="cuda"), torch.ones(3, device="cuda"))
    print(x.sum().item())
elif what == "jax_coordinator":
    import jax
    jax.distributed.initialize(coordinator_address="127.0.0.1:29561", num_processes=2, process_id=1,
                               initialization_timeout=15)
elif what == "compile_graphs":
    import torch
    f = torch.compile(lambda t: torch.nn.functional.gelu(t) * 2, mode="reduce-overhead")
    for n in (16, 32, 48, 64):
        for _ in range(3):
            y = f(torch.randn(n, 128, device="cuda"))
    torch.cuda.synchronize()
    print("ok", y.shape)
elif what == "ipc_producer_exits":
    import torch, torch.multiprocessing as mp
    def producer(q):
        q.put(torch.ones(4, device="cuda"))
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=producer, args=(q,))
    p.start(); p.join()
    t = q.get(timeout=30)
    print(t.sum().item())
print("finished", what)
