import torch, flashinfer
print("flashinfer", flashinfer.__version__, flush=True)
x = torch.randn(8, 256, device="cuda", dtype=torch.float16)
y = flashinfer.activation.silu_and_mul(x)
torch.cuda.synchronize()
print("ok", y.shape)
