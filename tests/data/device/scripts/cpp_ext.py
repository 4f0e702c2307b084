# Build a tiny CUDA extension with torch.utils.cpp_extension and call it.
import sys, torch
from torch.utils.cpp_extension import load_inline
cuda_src = r"""
__global__ void add_one(float* x, int n){int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) x[i]+=1.0f;}
void run(torch::Tensor x){int n=x.numel(); add_one<<<(n+255)/256,256>>>(x.data_ptr<float>(), n); C10_CUDA_KERNEL_LAUNCH_CHECK();}
"""
cpp_src = "void run(torch::Tensor x);"
mod = load_inline(name=sys.argv[1], cpp_sources=cpp_src, cuda_sources=cuda_src,
                  functions=["run"], verbose=True, extra_include_paths=[],
                  extra_cuda_cflags=["-include", "c10/cuda/CUDAException.h"])
x = torch.zeros(1024, device="cuda")
mod.run(x)
torch.cuda.synchronize()
print("sum", x.sum().item())
