import os, sys, torch, torch.distributed as dist
mode = sys.argv[1]
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(0)
t = torch.ones(1024, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print("rank", rank, "ok", t[0].item())
dist.destroy_process_group()
