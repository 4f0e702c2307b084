#!/bin/bash
# Fourth device session: pinned host memory beyond RAM, SDPA with no usable backend, compute-sanitizer
# on the wild and misaligned kernels of run3.sh, NCCL told to use an IB device that is not there.
cd "$(dirname "$0")"; HERE=$(pwd)
C=/tmp/cap; mkdir -p $C; export PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/kx
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
cap() { local n=$1 t=$2; shift 2; echo "== $n: $*"; local s=$(date +%s)
  ( timeout $t "$@" ) > $C/$n.log 2>&1; local rc=$?
  echo "rc=$rc secs=$(( $(date +%s) - s )) cmd=$*" > $C/$n.meta
  (cd /tmp && tar -rf $OUT/cap4.tar cap/$n.log cap/$n.meta); echo "   rc=$rc secs=$(( $(date +%s) - s ))"; }
(cd /tmp && tar -cf $OUT/cap4.tar --files-from /dev/null)
( cd /tmp && timeout 200 python3 $HERE/kernel_ext.py build > $C/kx_build.log 2>&1 ) & B1=$!
cap pinned_over_ram 90 python3 gpu_misc.py pinned
cap sdpa_flash_fp32 60 python3 gpu_misc.py sdpa_flash
cap nccl_ib_hca_missing 90 env NCCL_DEBUG=INFO NCCL_IB_HCA=mlx5_9 torchrun --nproc_per_node=1 --master_port=29551 nccl_cases.py one
cap sanitizer_cupy_wild 120 $CS --tool memcheck python3 cupy_launch.py wild
wait $B1
cap sanitizer_ext_unaligned 120 $CS --tool memcheck python3 kernel_ext.py unaligned
cap sanitizer_ok 120 $CS --tool memcheck python3 cupy_launch.py ok
dmesg | tail -20 > $C/dmesg4.log 2>&1; (cd /tmp && tar -rf $OUT/cap4.tar cap/dmesg4.log)
gzip -c $OUT/cap4.tar > $OUT/cap4.tar.gz && rm $OUT/cap4.tar; echo done
