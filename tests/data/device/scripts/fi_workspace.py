# FlashInfer's batch decode planned with a workspace buffer far smaller than its split-KV needs.
import torch, flashinfer
print("flashinfer", flashinfer.__version__, flush=True)
ws = torch.empty(64 * 1024, dtype=torch.uint8, device="cuda")
w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
bs, pages, page, nq, nkv, hd = 64, 256, 16, 32, 8, 128
kv_indptr = torch.arange(0, bs + 1, device="cuda", dtype=torch.int32) * pages
kv_indices = torch.arange(0, bs * pages, device="cuda", dtype=torch.int32)
last = torch.full((bs,), page, dtype=torch.int32, device="cuda")
w.plan(kv_indptr, kv_indices, last, nq, nkv, hd, page, data_type=torch.float16)
q = torch.randn(bs, nq, hd, device="cuda", dtype=torch.float16)
kv = torch.randn(bs * pages, 2, page, nkv, hd, device="cuda", dtype=torch.float16)
o = w.run(q, kv)
torch.cuda.synchronize()
print("ok", o.shape)
