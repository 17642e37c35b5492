#!/usr/bin/env python3
"""Checks a GPU-metrics raw capture (metrics-<pid>.gtcap, docs/capture.md "GPU metrics") and writes
its manifest.json beside it. Standard library only (runs on the GPU machine from the kit).

  metrics_capture_check.py CAPTURE MODE KIND GPU DRIVER CUDA COMMAND
    MODE pm: needs a PM-sampling set-up and at least one decoded image with completed samples;
    MODE range: needs a range-profiler set-up and at least one evaluated pass with one range.
Prints one "PASS|FAIL capture-<mode>: ..." line; exit status 1 on FAIL.
"""
import json
import os
import struct
import sys

FRAME_INFO, FRAME_END = 1, 7
PM_CONFIG, PM_DATA, RANGE_CONFIG, RANGE_DATA = 15, 16, 17, 18
NAMES = {FRAME_INFO: "info", FRAME_END: "end", PM_CONFIG: "pm_config", PM_DATA: "pm_data",
         RANGE_CONFIG: "range_config", RANGE_DATA: "range_data"}
LIMIT_BYTES = 2 << 20  # inject/rawcap/metrics_capture.h kMaxFileBytes


def main():
    path, mode, kind, gpu, driver, cuda, command = sys.argv[1:8]
    data = open(path, "rb").read()
    problems = []
    if data[:8] != b"GTCAPv\0\0":
        print(f"FAIL capture-{mode}: {path} is not a gtrace raw capture")
        return 1
    version, header = struct.unpack_from("<II", data, 8)
    pos, frames, info, chips, samples, ranges, end = header, {}, {}, set(), 0, 0, None
    metrics = []
    while pos + 16 <= len(data):
        ftype, size, _seq = struct.unpack_from("<IIQ", data, pos)
        body = data[pos + 16:pos + 16 + size]
        if len(body) < size:
            problems.append("cut frame at the end")
            break
        pos += 16 + size
        frames[NAMES.get(ftype, str(ftype))] = frames.get(NAMES.get(ftype, str(ftype)), 0) + 1
        if ftype == FRAME_INFO:
            for line in body.decode(errors="replace").splitlines():
                k, _, v = line.partition("=")
                info[k] = v
        elif ftype == PM_CONFIG:
            metric_count, names_bytes = struct.unpack_from("<II", body, 44)
            chips.add(body[64:96].split(b"\0")[0].decode())
            metrics = body[96:96 + names_bytes].decode().split("\n")[:metric_count]
        elif ftype == RANGE_CONFIG:
            metric_count, names_bytes = struct.unpack_from("<II", body, 24)
            chips.add(body[40:72].split(b"\0")[0].decode())
            metrics = body[72:72 + names_bytes].decode().split("\n")[:metric_count]
        elif ftype == PM_DATA:
            samples += struct.unpack_from("<Q", body, 32)[0]  # completed_samples
        elif ftype == RANGE_DATA:
            ranges += struct.unpack_from("<I", body, 68)[0]  # range_count
        elif ftype == FRAME_END:
            end = dict(zip(["images", "image_bytes", "callbacks", "callbacks_dropped", "images_dropped"],
                           struct.unpack_from("<5Q", body, 0)))
    if end is None:
        problems.append("no end frame (the process did not finish its capture)")
    if mode == "pm" and (frames.get("pm_config", 0) == 0 or samples == 0):
        problems.append(f"no PM-sampling image with samples ({frames})")
    if mode == "range" and (frames.get("range_config", 0) == 0 or ranges == 0):
        problems.append(f"no evaluated range-profiler pass ({frames})")
    if len(data) > LIMIT_BYTES + (1 << 20):
        problems.append(f"{len(data)} bytes, over the 2 MiB bound")
    manifest = {
        "format": "gtrace raw capture manifest", "capture_format_version": version, "kind": kind,
        "what": "gpu-metrics-" + mode, "gpu": gpu, "driver": driver, "cuda": cuda, "chips": sorted(chips),
        "metrics": metrics, "command": command, "file": os.path.basename(path), "bytes": len(data),
        "frames": frames, "completed_samples": samples, "ranges": ranges, "end": end, "info": info,
    }
    json.dump(manifest, open(os.path.join(os.path.dirname(path), "manifest.json"), "w"), indent=2, sort_keys=True)
    summary = (f"{os.path.basename(path)}: chip {','.join(sorted(chips)) or '?'}, {len(metrics)} metrics, "
               f"{frames.get('pm_data', 0)} PM images ({samples} samples), {frames.get('range_data', 0)} range "
               f"passes ({ranges} ranges), {len(data)} bytes"
               + (f", {end['images_dropped']} images not kept (bound)" if end and end["images_dropped"] else ""))
    if problems:
        print(f"FAIL capture-{mode}: {summary}: " + "; ".join(problems))
        return 1
    print(f"PASS capture-{mode}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
