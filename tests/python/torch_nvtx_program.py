"""The torch program of python.torch_nvtx (tests/python/torch_nvtx_test.py): torch.cuda.nvtx ranges,
a mark, a start/end range ended on another thread, and torch.autograd.profiler.emit_nvtx() around a
forward and backward pass (and once with record_shapes=True). Runs on a machine without a GPU.

emit_nvtx's __enter__ and __exit__ call torch.cuda.synchronize() (torch 2.15.0
torch/autograd/profiler.py, lines 1191 and 1210), which raises without a driver; it is replaced by a
no-op here. Every NVTX call is torch's own: torch.cuda.nvtx goes through torch._C._nvtx
(libtorch_python.so) and emit_nvtx's per-op ranges through the profiler's NVTX observer
(libtorch_cuda.so); both include NVTX3 header-only and find gtrace through NVTX_INJECTION64_PATH.
"""
import threading

import torch
import torch.cuda.nvtx as nvtx

torch.cuda.synchronize = lambda *args, **kwargs: None  # needs a driver; nothing to wait for on CPU

depths = [nvtx.range_push("step 0")]
with nvtx.range("forward {}", 1):
    nvtx.mark("checkpoint")
handle = nvtx.range_start("loader")
ender = threading.Thread(target=nvtx.range_end, args=(handle,), name="ender")
ender.start()
ender.join()

x = torch.ones(2, 3, requires_grad=True)
with torch.autograd.profiler.emit_nvtx():
    y = (x * 2).sum()
    y.backward()
with torch.autograd.profiler.emit_nvtx(record_shapes=True):
    z = torch.add(x, x)
depths.append(nvtx.range_pop())
print("depths", depths)
print("grad", x.grad.tolist())
