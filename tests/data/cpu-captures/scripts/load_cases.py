# Model files that cannot be read: a truncated torch checkpoint, a truncated safetensors file,
# a model that is neither cached nor downloadable (offline), a checkpoint written to a full disk.
import os, sys, torch
what, where = sys.argv[1], sys.argv[2]
if what == "torch_truncated":
    torch.save({"w": torch.zeros(256, 256)}, f"{where}/model.pt")
    with open(f"{where}/model.pt", "r+b") as f:
        f.truncate(40000)
    torch.load(f"{where}/model.pt")
elif what == "safetensors_truncated":
    from safetensors.torch import load_file, save_file
    save_file({"w": torch.zeros(256, 256)}, f"{where}/model.safetensors")
    with open(f"{where}/model.safetensors", "r+b") as f:
        f.truncate(100)
    load_file(f"{where}/model.safetensors")
elif what == "hf_offline":
    from transformers import AutoConfig
    AutoConfig.from_pretrained("Qwen/Qwen2.5-7B-Instruct")
elif what == "disk_full":
    torch.save({"w": torch.zeros(1024, 1024)}, f"{where}/model.pt")
print("finished", what)
