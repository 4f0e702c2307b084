# A DataLoader worker that dies: killed by SIGKILL (as the kernel's OOM killer does) or by a segfault.
import ctypes, os, signal, sys, torch
from torch.utils.data import DataLoader, Dataset
what = sys.argv[1]
class D(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i):
        if i == 9:
            if what == "sigkill": os.kill(os.getpid(), signal.SIGKILL)
            if what == "segv": ctypes.string_at(0)
        return torch.zeros(4)
for b in DataLoader(D(), batch_size=4, num_workers=2):
    pass
print("done")
