import torch
@torch.compile
def f(x):
    return torch.sin(x) * 2 + 1
print(f(torch.randn(1024, device="cuda")).sum().item())
