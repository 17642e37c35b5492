#!/usr/bin/env python3
"""nvtx_sample.py: the Python side of gtrace's NVTX support, with the `nvtx` package from PyPI.

Run it under gtrace:  gtrace profile -- python3 samples/nvtx_sample.py [--steps N]

What it records (N steps, default 5):
  domain "python-sample"; category 1 named "train" in it;
  N x annotate("step", domain, category 1, payload=step index) containing
      annotate("forward") and annotate("backward") (default domain, colors "green"/"red");
  a decorated function `load_batch` called N times (default domain);
  push_range/pop_range "manual" once; start_range/end_range "io" once (ended on another thread);
  mark "checkpoint" once, in the sample domain.
"""
import argparse
import threading
import time

import nvtx


def busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@nvtx.annotate("load_batch", color="blue")
def load_batch():
    busy(0.0005)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    domain = nvtx.get_domain("python-sample")
    domain.get_category_id("train")  # names category 1 in the domain

    io = nvtx.start_range("io")
    for step in range(args.steps):
        with nvtx.annotate("step", domain="python-sample", category="train", payload=step):
            load_batch()
            with nvtx.annotate("forward", color="green"):
                busy(0.001)
            with nvtx.annotate("backward", color="red"):
                busy(0.002)
    nvtx.push_range("manual")
    busy(0.0005)
    nvtx.pop_range()
    nvtx.mark("checkpoint", domain="python-sample")
    ender = threading.Thread(target=nvtx.end_range, args=(io,), name="ender")
    ender.start()
    ender.join()
    print(f"nvtx_sample.py: {args.steps} steps done")


if __name__ == "__main__":
    main()
