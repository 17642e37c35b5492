"""A deliberately slow device-to-host copy, for --cudabacktrace (scripts/gpu-check.d/40-callstacks.sh).

    python slow_copy.py                 warm up, then `.cpu()` of a 1 GiB tensor inside the NVTX range
                                        "slow_cpu_copy" (tens of ms over PCIe: far above a 1 ms threshold)
    python slow_copy.py --spawn-child   the same in this process, and once more in a child started with
                                        fork + exec (subprocess), as torchrun starts its workers

Prints "maps-libunwind" when libunwind is mapped into this process (it must not be without
--cudabacktrace).
"""
import os
import subprocess
import sys

import torch


def main():
    dev = torch.device("cuda")
    x = torch.ones(1 << 28, device=dev)  # 256 Mi floats = 1 GiB
    y = (x * 2).sum()  # a kernel or two; CUDA is initialized and warm
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("slow_cpu_copy")
    host = x.cpu()  # the slow copy (LINE: slow-copy, for --python-backtrace)
    torch.cuda.nvtx.range_pop()
    assert float(host[0]) == 1.0 and float(y) == float(2 * (1 << 28))
    with open("/proc/self/maps") as maps:
        if "libunwind" in maps.read():
            print("maps-libunwind")
    if "--spawn-child" in sys.argv:
        subprocess.run([sys.executable, __file__], check=True)
    print("ok")


if __name__ == "__main__":
    main()
