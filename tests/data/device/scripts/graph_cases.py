# CUDA graph capture misuse, as serving engines hit it when a model's forward syncs with the host.
import sys, torch
what = sys.argv[1]
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
if what == "item":        # a host read inside capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        print(y.sum().item())
elif what == "sync":      # a device-wide sync inside capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        torch.cuda.synchronize()
elif what == "nonzero":   # an op whose output size depends on data
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.nonzero(x > 0)
elif what == "default":   # capture begun on the legacy default stream
    g = torch.cuda.CUDAGraph()
    g.capture_begin()
    y = x * 2
    g.capture_end()
print("finished", what)
