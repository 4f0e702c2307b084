#!/bin/bash
# Failures of CPU-side ranks and loader workers, captured with a CPU build of torch (no GPU needed):
# OUT=<dir> bash run.sh, with torch and torchrun on PATH.
cd "$(dirname "$0")"; export PYTHONUNBUFFERED=1; OUT=${OUT:-.}
for m in raise sigkill segv exit sleep; do timeout 120 torchrun --nproc_per_node=2 --master_port=2955${#m} ranks.py $m > $OUT/rank-$m.log 2>&1; done
for m in sigkill segv; do timeout 60 python3 loader.py $m > $OUT/loader-$m.log 2>&1; done
# model files that cannot be read or written (disk_full needs root for a 1 MiB tmpfs)
mkdir -p /tmp/cap-w /tmp/cap-small; mount -t tmpfs -o size=1m tmpfs /tmp/cap-small
python3 load_cases.py torch_truncated /tmp/cap-w > $OUT/torch-load-truncated.log 2>&1
python3 load_cases.py safetensors_truncated /tmp/cap-w > $OUT/safetensors-truncated.log 2>&1
HF_HUB_OFFLINE=1 HF_HOME=/tmp/cap-hf python3 load_cases.py hf_offline /tmp/cap-w > $OUT/hf-offline-not-cached.log 2>&1
python3 load_cases.py disk_full /tmp/cap-small > $OUT/torch-save-disk-full.log 2>&1
python3 -c "import torch; torch.save({'w': torch.zeros(256, 256)}, '/tmp/cap-w/full.pt'); d = open('/tmp/cap-w/full.pt', 'rb').read(); open('/tmp/cap-w/half.pt', 'wb').write(d[:len(d) // 2])"
python3 -c "import torch; torch.load('/tmp/cap-w/half.pt')" > $OUT/torch-load-half.log 2>&1
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n' > /tmp/cap-w/lfs.pt
python3 -c "import torch; torch.load('/tmp/cap-w/lfs.pt')" > $OUT/torch-load-lfs-pointer.log 2>&1
(ulimit -n 64; python3 fd_loader.py > $OUT/loader-fd-limit.log 2>&1)
