#!/bin/bash
# Failures of CPU-side ranks and loader workers, captured with a CPU build of torch (no GPU needed):
# OUT=<dir> bash run.sh, with torch and torchrun on PATH.
cd "$(dirname "$0")"; export PYTHONUNBUFFERED=1; OUT=${OUT:-.}
for m in raise sigkill segv exit sleep; do timeout 120 torchrun --nproc_per_node=2 --master_port=2955${#m} ranks.py $m > $OUT/rank-$m.log 2>&1; done
for m in sigkill segv; do timeout 60 python3 loader.py $m > $OUT/loader-$m.log 2>&1; done
