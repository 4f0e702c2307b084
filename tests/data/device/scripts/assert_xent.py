import torch
logits = torch.randn(4, 10, device="cuda")
target = torch.tensor([1, 2, 10, 3], device="cuda")
loss = torch.nn.functional.cross_entropy(logits, target)
print(loss.item())
