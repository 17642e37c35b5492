#!/usr/bin/env python3
"""Test double: stand-in CUDA libraries that let PyPI's torch wheel be imported without them.

    python3 tests/fakes/torch_cuda_stubs.py SITE_PACKAGES OUT_DIR

PyPI's torch wheel for x86-64 Linux is a CUDA build (there is no CPU build on PyPI). Its libraries
(libtorch_cuda.so, libtorch_python.so, libtorch_cpu.so, ...) name cuDNN, cuBLAS, cuFFT, cuSPARSE,
cuSPARSELt, NCCL, NVSHMEM, NVRTC, cuFile and CUPTI as DT_NEEDED, so `import torch` needs about 2 GB of
nvidia-* wheels although a program that never touches a GPU calls none of them. This script writes,
for each such library that is not installed (not in torch/lib, site-packages/nvidia/*/lib or the
system's loader cache), a stand-in with the same soname and symbol version that defines every
symbol torch's libraries import from it and that no real library provides. Each stand-in function
prints `torch_cuda_stubs: <library>: <symbol> called` to stderr and aborts: the test that uses them
fails loudly if torch ever calls one. The CUDA runtime (libcudart, 2 MB) is the real one (nvidia-cuda-
runtime), so torch sees "no driver" as it would on a machine without a GPU.

Needs a C compiler (cc) and binutils (nm, readelf). Prints the sonames it wrote; exit 1 on error.
"""
import glob
import os
import re
import subprocess
import sys

SYSTEM_SKIP = re.compile(r"^(_?Py|_init$|_fini$)")
# The libraries every manylinux wheel takes from the system.
SYSTEM_LIBS = ("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2",
               "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1")


def run(argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", "-W", path]))


def version_files(path):
    """version name -> the file (soname) it is required from, from the Version needs section."""
    out, current, result = run(["readelf", "-V", "-W", path]), None, {}
    in_needs = False
    for line in out.splitlines():
        if "Version needs section" in line:
            in_needs = True
            continue
        if not in_needs:
            continue
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"Name: (\S+)", line)
        if m and current:
            result[m.group(1)] = current
    return result


def undefined(path):
    """(symbol, version or None) for every strong undefined dynamic symbol."""
    result = []
    for line in run(["nm", "-D", "--undefined-only", path]).splitlines():
        parts = line.split()
        if len(parts) != 2 or parts[0] != "U":
            continue
        name, _, version = parts[1].partition("@")
        result.append((name, version.lstrip("@") or None))
    return result


def defined(path):
    names = set()
    for line in run(["nm", "-D", "--defined-only", path]).splitlines():
        parts = line.split()
        if len(parts) == 3:
            names.add(parts[2].split("@")[0])
    return names


def loader_cache():
    """soname -> path, from `ldconfig -p` (the system's libraries)."""
    result = {}
    try:
        out = run(["ldconfig", "-p"]) if os.path.exists("/sbin/ldconfig") or os.path.exists("/usr/sbin/ldconfig") else ""
    except (OSError, subprocess.CalledProcessError):
        out = ""
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) \(.*x86-64.*\) => (\S+)", line)
        if m and m.group(1) not in result:
            result[m.group(1)] = m.group(2)
    return result


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: torch_cuda_stubs.py SITE_PACKAGES OUT_DIR")
    site, out_dir = sys.argv[1], sys.argv[2]
    torch_lib = os.path.join(site, "torch", "lib")
    present = {}  # soname -> path of a real library in the venv (torch's own, nvidia-* wheels)
    for path in glob.glob(os.path.join(site, "nvidia", "*", "lib", "*.so*")) + \
            glob.glob(os.path.join(torch_lib, "*.so*")) + glob.glob(os.path.join(site, "torch", "_C*.so")):
        present.setdefault(os.path.basename(path), path)
    roots = [p for p in present.values() if os.path.basename(p).startswith("_C") or
             os.path.basename(p) == "libtorch_global_deps.so"]
    if len(roots) != 2:
        sys.exit("torch_cuda_stubs: torch/_C*.so or libtorch_global_deps.so not under %s" % site)
    cache = loader_cache()
    # What `import torch` loads: the NEEDED closure of torch/_C and libtorch_global_deps.so (libraries
    # torch dlopens later, e.g. libcaffe2_nvrtc.so, which needs the driver, stay out). Needed libraries
    # found neither in the venv nor among the system's core libraries get a stand-in, also when the
    # machine has a CUDA toolkit: mixing its versions with torch's is what we must not depend on.
    torch_elfs, missing, version_of, todo = [], [], {}, list(roots)
    while todo:
        elf = todo.pop()
        if elf in torch_elfs:
            continue
        torch_elfs.append(elf)
        version_of.update(version_files(elf))
        for soname in needed(elf):
            if soname in present:
                todo.append(present[soname])
            elif soname not in SYSTEM_LIBS and soname not in missing:
                if soname.startswith("libcuda.so"):
                    sys.exit("torch_cuda_stubs: torch needs the driver (%s) at load time" % soname)
                missing.append(soname)
    if not missing:
        print("torch_cuda_stubs: nothing missing")
        return

    # Symbols any real library in reach defines: torch's own, the installed nvidia ones, the system's.
    provided = set()
    for path in torch_elfs + [cache[s] for s in SYSTEM_LIBS if s in cache]:
        provided |= defined(path)

    per_lib = {soname: set() for soname in missing}
    versions = {soname: None for soname in missing}
    for elf in torch_elfs:
        for name, version in undefined(elf):
            if name in provided or SYSTEM_SKIP.match(name):
                continue
            target = version_of.get(version) if version else None
            if target in per_lib:
                per_lib[target].add(name)
                versions[target] = version
            elif target is None:
                # Unversioned: the loader looks it up in every library; any stand-in will do, but put
                # it where a reader would look for it.
                prefix = {"cuFile": "libcufile", "cusparseLt": "libcusparseLt", "nccl": "libnccl",
                          "nvshmem": "libnvshmem"}
                lib = next((s for p, stem in prefix.items() if name.startswith(p)
                            for s in missing if s.startswith(stem + ".")), missing[0])
                per_lib[lib].add(name)

    os.makedirs(out_dir, exist_ok=True)
    for soname in missing:
        stem = os.path.join(out_dir, soname + ".stub")
        with open(stem + ".c", "w") as f:
            f.write("/* Generated by tests/fakes/torch_cuda_stubs.py: a stand-in for %s. */\n" % soname)
            f.write("#include <stdio.h>\n#include <stdlib.h>\n")
            f.write("static void called(const char* s) {\n"
                    "  fprintf(stderr, \"torch_cuda_stubs: %s: %%s called\\n\", s);\n  abort();\n}\n" % soname)
            for name in sorted(per_lib[soname]):
                f.write("void %s(void) { called(\"%s\"); }\n" % (name, name))
        argv = ["cc", "-shared", "-fPIC", "-O0", "-o", os.path.join(out_dir, soname), "-Wl,-soname," + soname,
                stem + ".c"]
        if versions[soname]:
            with open(stem + ".map", "w") as f:
                f.write("%s { global: *; };\n" % versions[soname])
            argv.append("-Wl,--version-script=" + stem + ".map")
        subprocess.run(argv, check=True)
        print("%s: %d symbols%s" % (soname, len(per_lib[soname]),
                                    " (version %s)" % versions[soname] if versions[soname] else ""))


if __name__ == "__main__":
    main()
