#!/bin/bash
# Second device session: Triton's ptxas and cache, JAX backend and libdevice, old arch lists, NCCL env values, a busy port.
cd "$(dirname "$0")"
C=/tmp/cap; mkdir -p $C; export PYTHONUNBUFFERED=1
cap() { local n=$1 t=$2; shift 2; echo "== $n: $*"; local s=$(date +%s)
  ( timeout $t "$@" ) > $C/$n.log 2>&1; local rc=$?
  echo "rc=$rc secs=$(( $(date +%s) - s )) cmd=$*" > $C/$n.meta
  (cd /tmp && tar -rf $OUT/cap2.tar cap/$n.log cap/$n.meta); echo "   rc=$rc"; }
{ python3 -c "import triton,os;d=os.path.dirname(triton.__file__);print(d)"; ls $(python3 -c "import triton,os;print(os.path.dirname(triton.__file__))")/backends/nvidia/bin; $(python3 -c "import triton,os;print(os.path.dirname(triton.__file__))")/backends/nvidia/bin/ptxas --version; /usr/local/cuda/bin/ptxas --version; ls /usr/local/cuda/nvvm/libdevice; } > $C/env2.log 2>&1
(cd /tmp && tar -cf $OUT/cap2.tar cap/env2.log)
( cd /tmp && TORCH_EXTENSIONS_DIR=/tmp/ext50 TORCH_CUDA_ARCH_LIST="5.0;8.0" timeout 200 python3 $OLDPWD/cpp_ext.py ext_arch50 > $C/ext_arch50.log 2>&1; echo "rc=$?" > $C/ext_arch50.meta ) & B1=$!
cap triton_ptxas_system 120 env TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas TRITON_CACHE_DIR=/tmp/tc1 python3 triton_simple.py
cap triton_ptxas_devnull 120 env TRITON_PTXAS_PATH=/dev/null TRITON_CACHE_DIR=/tmp/tc2 python3 triton_simple.py
cap triton_cache_unwritable 120 env TRITON_CACHE_DIR=/proc/1/triton python3 triton_simple.py
cap triton_smem2 150 env TRITON_CACHE_DIR=/tmp/tc3 python3 triton_smem2.py
cap jax_no_gpu 60 env CUDA_VISIBLE_DEVICES= JAX_PLATFORMS=cuda python3 jax_cases.py small
cap jax_no_gpu_fallback 60 env CUDA_VISIBLE_DEVICES= python3 jax_cases.py small
cap jax_mem_fraction_bad 60 env XLA_PYTHON_CLIENT_MEM_FRACTION=1.5 python3 jax_cases.py small
cap jax_cuda_data_dir 90 env XLA_FLAGS=--xla_gpu_cuda_data_dir=/opt/nocuda python3 jax_cases.py small
cap nccl_proto_bad 120 env NCCL_DEBUG=WARN NCCL_PROTO=FAST NCCL_ALGO=Spiral torchrun --nproc_per_node=1 --master_port=29521 nccl_cases.py one
python3 -c "import socket,time;s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);s.bind(('0.0.0.0',29530));s.listen();time.sleep(60)" & P=$!; sleep 1
cap torchrun_port_busy 90 torchrun --nproc_per_node=1 --master_port=29530 nccl_cases.py one
kill $P 2>/dev/null
wait $B1; (cd /tmp && tar -rf $OUT/cap2.tar cap/ext_arch50.log cap/ext_arch50.meta)
gzip -c $OUT/cap2.tar > $OUT/cap2.tar.gz && rm $OUT/cap2.tar; echo done
