import sys, torch
what = sys.argv[1]
if what == "zeros":
    print(torch.cuda.is_available(), torch.cuda.device_count())
    torch.zeros(1, device="cuda")
elif what == "ordinal":
    torch.zeros(1, device="cuda:3")
elif what == "set_device":
    torch.cuda.set_device(5)
