#!/bin/bash
# Third device session: CUDA graph capture misuse, cuBLAS/cuDNN/NCCL on a full GPU, bad launch
# configurations and wild or misaligned accesses (torch extension and CuPy), a build without its
# headers, fork after CUDA init, and other everyday misuse. Needs torch, triton and cupy; no wheels.
cd "$(dirname "$0")"; HERE=$(pwd)
C=/tmp/cap; mkdir -p $C; export PYTHONUNBUFFERED=1
cap() { local n=$1 t=$2; shift 2; echo "== $n: $*"; local s=$(date +%s)
  ( timeout $t "$@" ) > $C/$n.log 2>&1; local rc=$?
  echo "rc=$rc secs=$(( $(date +%s) - s )) cmd=$*" > $C/$n.meta
  (cd /tmp && tar -rf $OUT/cap3.tar cap/$n.log cap/$n.meta); echo "   rc=$rc secs=$(( $(date +%s) - s ))"; }
{ nvidia-smi; python3 -c "import torch,triton,cupy;print('torch',torch.__version__,torch.version.cuda,'cudnn',torch.backends.cudnn.version(),'nccl',torch.cuda.nccl.version(),'triton',triton.__version__,'cupy',cupy.__version__)"; dmesg 2>&1 | tail -3; } > $C/env3.log 2>&1
(cd /tmp && tar -cf $OUT/cap3.tar cap/env3.log)
export TORCH_EXTENSIONS_DIR=/tmp/kx
( cd /tmp && timeout 240 python3 $HERE/kernel_ext.py build > $C/kx_build.log 2>&1; echo "rc=$?" >> $C/kx_build.log ) & B1=$!
( cd /tmp && timeout 120 python3 $HERE/kernel_ext.py noheader > $C/ext_no_header.log 2>&1; echo "rc=$?" > $C/ext_no_header.meta ) & B2=$!
for m in item sync nonzero default; do cap graph_$m 60 python3 graph_cases.py $m; done
cap full_cublas 90 python3 full_gpu.py cublas
cap full_cudnn 90 python3 full_gpu.py cudnn
cap full_nccl 120 env NCCL_DEBUG=WARN torchrun --nproc_per_node=1 --master_port=29541 full_gpu.py nccl
for m in fork devices multinomial cholesky dtype; do cap misc_$m 60 python3 misc_cases.py $m; done
cap store_timeout 60 python3 misc_cases.py store
cap inductor_no_cxx 150 env CXX=/nonexistent/g++ CC=/nonexistent/gcc TORCHINDUCTOR_CACHE_DIR=/tmp/ind1 python3 misc_cases.py inductor
cap triton_arange 90 env TRITON_CACHE_DIR=/tmp/tca python3 misc_cases.py triton_arange
for m in block wild ok nvrtc; do cap cupy_$m 60 python3 cupy_launch.py $m; done
wait $B1; (cd /tmp && tar -rf $OUT/cap3.tar cap/kx_build.log)
for m in bad_block big_shared wild unaligned; do cap ext_$m 60 python3 kernel_ext.py $m; done
cap ext_wild_blocking 60 env CUDA_LAUNCH_BLOCKING=1 python3 kernel_ext.py wild
wait $B2; (cd /tmp && tar -rf $OUT/cap3.tar cap/ext_no_header.log cap/ext_no_header.meta)
dmesg > $C/dmesg3.log 2>&1; (cd /tmp && tar -rf $OUT/cap3.tar cap/dmesg3.log)
gzip -c $OUT/cap3.tar > $OUT/cap3.tar.gz && rm $OUT/cap3.tar; echo done
