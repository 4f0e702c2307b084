import sys, torch
if sys.argv[1] == "fraction":
    torch.cuda.set_per_process_memory_fraction(0.01)
    x = torch.empty(8 * 2**30, dtype=torch.uint8, device="cuda")
else:
    keep = torch.empty(100 * 2**30, dtype=torch.uint8, device="cuda")
    x = torch.empty(60 * 2**30, dtype=torch.uint8, device="cuda")
