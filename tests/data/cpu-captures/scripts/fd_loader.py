# DataLoader workers handing many tensors back under a low open-files limit (ulimit -n).
import torch
from torch.utils.data import DataLoader, Dataset
class D(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i): return [torch.zeros(2) for _ in range(200)]
for _b in DataLoader(D(), batch_size=2, num_workers=2):
    pass
print("done")
