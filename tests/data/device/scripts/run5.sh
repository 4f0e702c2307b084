#!/bin/bash
# Fifth device session: determinism errors, JAX without its coordinator, healthy compiled CUDA
# graphs, a CUDA IPC producer that exits first, and nvidia-smi's own outputs (healthy and refused).
cd "$(dirname "$0")"
C=/tmp/cap; mkdir -p $C; export PYTHONUNBUFFERED=1
cap() { local n=$1 t=$2; shift 2; echo "== $n: $*"; local s=$(date +%s)
  ( timeout $t "$@" ) > $C/$n.log 2>&1; local rc=$?
  echo "rc=$rc secs=$(( $(date +%s) - s )) cmd=$*" > $C/$n.meta
  (cd /tmp && tar -rf $OUT/cap5.tar cap/$n.log cap/$n.meta); echo "   rc=$rc secs=$(( $(date +%s) - s ))"; }
(cd /tmp && tar -cf $OUT/cap5.tar --files-from /dev/null)
cap det_cublas 60 python3 run5_cases.py det_cublas
cap det_index_add 60 python3 run5_cases.py det_index_add
cap jax_coordinator 90 python3 run5_cases.py jax_coordinator
cap compile_graphs 180 env TORCHINDUCTOR_CACHE_DIR=/tmp/ind5 TRITON_CACHE_DIR=/tmp/tc5 python3 run5_cases.py compile_graphs
cap ipc_producer_exits 90 python3 run5_cases.py ipc_producer_exits
cap smi_q 60 nvidia-smi -q
cap smi_topo 60 nvidia-smi topo -m
cap smi_nvlink 60 nvidia-smi nvlink -s
cap smi_bad_index 60 nvidia-smi -i 3
cap smi_bad_uuid 60 nvidia-smi -i GPU-00000000-1111-2222-3333-444444444444
cap smi_bad_field 60 nvidia-smi --query-gpu=name,bogus_field --format=csv
gzip -c $OUT/cap5.tar > $OUT/cap5.tar.gz && rm $OUT/cap5.tar; echo done
