#!/bin/bash
# One device session: capture real failure output of the GPU stack (torch, triton, NCCL, JAX, CuPy, FlashInfer, nvcc).
cd "$(dirname "$0")"; WHL=$(cd ../../../.. && pwd)/.whl   # ran from a copy at the repository root, with ../.whl
C=/tmp/cap; mkdir -p $C; export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHL"/*.whl >/dev/null 2>&1
cap() { # cap NAME TIMEOUT cmd...
  local n=$1 t=$2; shift 2
  echo "== $n: $*" ; local s=$(date +%s)
  ( timeout $t "$@" ) > $C/$n.log 2>&1; local rc=$?
  echo "rc=$rc secs=$(( $(date +%s) - s )) cmd=$*" > $C/$n.meta
  (cd /tmp && tar -rf $OUT/cap.tar cap/$n.log cap/$n.meta)
  echo "   rc=$rc"
}
capenv() { local n=$1 t=$2 e=$3; shift 3; cap $n $t env $e "$@"; }
{ nvidia-smi; nvcc --version; uname -a; python3 -c "import torch,triton,jax,cupy;print('torch',torch.__version__,torch.version.cuda,'nccl',torch.cuda.nccl.version(),'triton',triton.__version__,'jax',jax.__version__,'cupy',cupy.__version__)"; PYTHONPATH=/tmp/site python3 -c "import flashinfer;print('flashinfer',flashinfer.__version__)"; dmesg 2>&1 | tail -5; } > $C/env.log 2>&1
(cd /tmp && tar -cf $OUT/cap.tar cap/env.log)
# background builds
( cd /tmp && TORCH_EXTENSIONS_DIR=/tmp/ext100 TORCH_CUDA_ARCH_LIST=10.0 timeout 300 python3 $OLDPWD/cpp_ext.py ext_sm100 > $C/ext_sm100.log 2>&1; echo "rc=$?" > $C/ext_sm100.meta ) &
B1=$!
( cd /tmp && FLASHINFER_WORKSPACE_BASE=/tmp/fi_ok PYTHONPATH=/tmp/site timeout 300 python3 $OLDPWD/fi_case.py > $C/fi_ok.log 2>&1; echo "rc=$?" > $C/fi_ok.meta ) &
B2=$!
capenv ext_cuda_home_devnull 120 CUDA_HOME=/dev/null TORCH_EXTENSIONS_DIR=/tmp/extdn python3 cpp_ext.py ext_dn
capenv fi_cuda_home_devnull 120 CUDA_HOME=/dev/null FLASHINFER_WORKSPACE_BASE=/tmp/fi_dn PYTHONPATH=/tmp/site python3 fi_case.py
capenv fi_cuda_home_missing 120 CUDA_HOME=/opt/cuda-missing FLASHINFER_WORKSPACE_BASE=/tmp/fi_mi PYTHONPATH=/tmp/site python3 fi_case.py
capenv fi_arch_list_70 120 FLASHINFER_CUDA_ARCH_LIST=7.0 FLASHINFER_WORKSPACE_BASE=/tmp/fi_70 PYTHONPATH=/tmp/site python3 fi_case.py
cap assert_embedding 90 python3 assert_embedding.py
capenv assert_embedding_blocking 90 CUDA_LAUNCH_BLOCKING=1 python3 assert_embedding.py
cap assert_xent 90 python3 assert_xent.py
cap oom_plain 90 python3 oom.py plain
cap oom_fraction 90 python3 oom.py fraction
capenv cvd_empty 60 CUDA_VISIBLE_DEVICES= python3 cuda_simple.py zeros
capenv cvd_bad_mig 60 CUDA_VISIBLE_DEVICES=MIG-4b2e6c1a-0000-5000-8000-000000000000 python3 cuda_simple.py zeros
cap ordinal 60 python3 cuda_simple.py ordinal
cap set_device 60 python3 cuda_simple.py set_device
capenv alloc_conf_bad 60 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:maybe python3 cuda_simple.py zeros
cap triton_smem 120 python3 triton_cases.py smem
cap triton_bad_store 120 python3 triton_cases.py store
dmesg > $C/dmesg_after_store.log 2>&1; (cd /tmp && tar -rf $OUT/cap.tar cap/dmesg_after_store.log)
capenv nccl_dup_gpu 120 NCCL_DEBUG=WARN torchrun --nproc_per_node=2 --master_port=29511 nccl_cases.py dup
capenv nccl_single_info 120 NCCL_DEBUG=INFO torchrun --nproc_per_node=1 --master_port=29512 nccl_cases.py one
capenv nccl_no_iface 120 NCCL_SOCKET_IFNAME=nosuch0 torchrun --nproc_per_node=1 --master_port=29513 nccl_cases.py one
cap jax_oom 90 python3 jax_cases.py oom
python3 hold.py > $C/hold.log 2>&1 & H=$!; sleep 12
cap jax_prealloc_busy 60 python3 jax_cases.py small
kill $H 2>/dev/null; wait $H 2>/dev/null
nvcc -cubin -arch=sm_100a -o /tmp/k100.cubin k.cu > $C/nvcc_sm100.log 2>&1
cap cupy_no_binary 60 python3 cupy_cases.py /tmp/k100.cubin
cap nvcc_sm50 60 nvcc -arch=sm_50 -o /tmp/k50 k.cu
cap nvcc_sm70 60 nvcc -arch=sm_70 -o /tmp/k70 k.cu
capenv compile_cache_unwritable 180 TORCHINDUCTOR_CACHE_DIR=/proc/nope/ind TRITON_CACHE_DIR=/proc/nope/tri python3 compile_cache.py
wait $B1 $B2
(cd /tmp && tar -rf $OUT/cap.tar cap/ext_sm100.log cap/ext_sm100.meta cap/fi_ok.log cap/fi_ok.meta)
dmesg > $C/dmesg_end.log 2>&1; (cd /tmp && tar -rf $OUT/cap.tar cap/dmesg_end.log cap/hold.log cap/nvcc_sm100.log)
gzip -c $OUT/cap.tar > $OUT/cap.tar.gz && rm $OUT/cap.tar
echo done
