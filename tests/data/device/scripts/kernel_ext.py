# A CUDA extension whose kernels fail the way hand-written ones do: a bad launch configuration,
# too much dynamic shared memory, a wild pointer, a misaligned access; or one that cannot build.
import sys, torch
from torch.utils.cpp_extension import load_inline
what = sys.argv[1]
cuda_src = r"""
__global__ void touch(float* x, int n){int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) x[i]+=1.0f;}
__global__ void shared_user(float* x){extern __shared__ float s[]; s[threadIdx.x]=x[threadIdx.x]; __syncthreads(); x[threadIdx.x]=s[0];}
__global__ void misaligned(float* x){float* p=(float*)((char*)x+1); p[threadIdx.x]=1.0f;}
void bad_block(torch::Tensor x){touch<<<1, 2048>>>(x.data_ptr<float>(), x.numel()); C10_CUDA_KERNEL_LAUNCH_CHECK();}
void big_shared(torch::Tensor x){shared_user<<<1, 32, 400*1024>>>(x.data_ptr<float>()); C10_CUDA_KERNEL_LAUNCH_CHECK();}
void wild(torch::Tensor x){touch<<<1, 32>>>((float*)0x7f0000000000ULL, 32); C10_CUDA_KERNEL_LAUNCH_CHECK();}
void unaligned(torch::Tensor x){misaligned<<<1, 32>>>(x.data_ptr<float>()); C10_CUDA_KERNEL_LAUNCH_CHECK();}
"""
if what == "noheader":
    cuda_src = "#include <cutlass/cutlass.h>\n" + cuda_src
cpp_src = "void bad_block(torch::Tensor x); void big_shared(torch::Tensor x); void wild(torch::Tensor x); void unaligned(torch::Tensor x);"
mod = load_inline(name="kx_" + ("noheader" if what == "noheader" else "ok"), cpp_sources=cpp_src,
                  cuda_sources=cuda_src, functions=["bad_block", "big_shared", "wild", "unaligned"],
                  verbose=True, extra_cuda_cflags=["-include", "c10/cuda/CUDAException.h", "-gencode=arch=compute_90,code=sm_90"])
if what in ("build", "noheader"):
    print("built", flush=True); sys.exit(0)
x = torch.zeros(4096, device="cuda")
getattr(mod, what)(x)
torch.cuda.synchronize()
print("sum", x.sum().item())
