# Pinned host memory beyond the machine's RAM, and SDPA forced onto a backend that cannot run the inputs.
import sys, torch
what = sys.argv[1]
if what == "pinned":
    x = torch.empty(512 * 2**30, dtype=torch.uint8, pin_memory=True)
elif what == "sdpa_flash":
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn(1, 8, 128, 64, device="cuda", dtype=torch.float32)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        torch.nn.functional.scaled_dot_product_attention(q, q, q)
torch.cuda.synchronize()
print("finished", what)
