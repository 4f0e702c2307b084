# Two CPU ranks under torchrun (gloo): rank 1 fails in one of several ways while rank 0 waits in a collective.
import ctypes, datetime, os, signal, sys, time, torch, torch.distributed as dist
what = sys.argv[1]
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
rank = dist.get_rank()
t = torch.ones(4)
dist.all_reduce(t)
if rank == 1:
    if what == "raise":
        raise ValueError("bad shard index 7 for 2 shards")
    if what == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if what == "segv":
        ctypes.string_at(0)
    if what == "exit":
        os._exit(3)
    if what == "sleep":
        time.sleep(60)
dist.all_reduce(t)
print("rank", rank, "done", t[0].item())
dist.destroy_process_group()
