#!/bin/bash
# Sixth device session: FlashInfer's decode with a tiny workspace buffer, and JIT builds (torch
# cpp_extension, FlashInfer) with no ninja on PATH. Needs the flashinfer and tvm-ffi wheels in ../.whl.
cd "$(dirname "$0")"; WHL=$(cd ../../../.. && pwd)/.whl
C=/tmp/cap; mkdir -p $C; export PYTHONUNBUFFERED=1; PY=$(command -v python3)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHL"/*.whl >/dev/null 2>&1
cap() { local n=$1 t=$2; shift 2; echo "== $n: $*"; local s=$(date +%s)
  ( timeout $t "$@" ) > $C/$n.log 2>&1; local rc=$?
  echo "rc=$rc secs=$(( $(date +%s) - s )) cmd=$*" > $C/$n.meta
  (cd /tmp && tar -rf $OUT/cap6.tar cap/$n.log cap/$n.meta); echo "   rc=$rc secs=$(( $(date +%s) - s ))"; }
(cd /tmp && tar -cf $OUT/cap6.tar --files-from /dev/null)
echo "python3=$PY ninja=$(command -v ninja)"
cap fi_workspace_small 180 env PYTHONPATH=/tmp/site FLASHINFER_WORKSPACE_BASE=/tmp/fi_ws python3 fi_workspace.py
cap ext_no_ninja 120 env PATH=/usr/local/cuda/bin:/usr/bin:/bin TORCH_EXTENSIONS_DIR=/tmp/extnn $PY cpp_ext.py ext_nn
cap fi_no_ninja 120 env PATH=/usr/local/cuda/bin:/usr/bin:/bin PYTHONPATH=/tmp/site FLASHINFER_WORKSPACE_BASE=/tmp/fi_nn $PY fi_case.py
gzip -c $OUT/cap6.tar > $OUT/cap6.tar.gz && rm $OUT/cap6.tar; echo done
