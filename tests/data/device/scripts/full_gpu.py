# Fill the GPU's memory with this process's own allocations, then ask a library for a handle
# or workspace: cuBLAS, cuDNN or NCCL (the last under torchrun).
import sys, torch
what = sys.argv[1]
if what == "nccl":
    import torch.distributed as dist
    dist.init_process_group("nccl")
    torch.cuda.set_device(0)
a = torch.randn(256, 256, device="cuda")
img = torch.randn(8, 3, 64, 64, device="cuda")
w = torch.randn(16, 3, 3, 3, device="cuda")
keep, chunk = [], 2**30
while chunk >= 2**20:
    try:
        keep.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
    except torch.cuda.OutOfMemoryError:
        chunk //= 2
free, total = torch.cuda.mem_get_info()
print(f"filled: {len(keep)} blocks, free {free / 2**20:.0f} MiB of {total / 2**30:.0f} GiB", flush=True)
if what == "cublas":
    print((a @ a).sum().item())
elif what == "cudnn":
    print(torch.nn.functional.conv2d(img, w).sum().item())
elif what == "nccl":
    dist.all_reduce(a)
    torch.cuda.synchronize()
    print("reduced", a[0, 0].item())
    dist.destroy_process_group()
