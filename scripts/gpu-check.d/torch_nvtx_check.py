#!/usr/bin/env python3
"""torch_nvtx_check: checks the export of samples/cuda/torch_nvtx.py (11-torch.sh, part 4).

    torch_nvtx_check.py DB [PROJ_JSON]

DB is the gtrace export of one torch_nvtx.py run; PROJ_JSON the output of
`gtrace stats --report nvtx_gpu_proj_sum --format json DB` (left out on CPU: then only the names are
checked). Prints "PASS check: text" / "FAIL check: text" lines (common.bash's relay turns them into
results); exit status 0 when every check passed.

Names are torch's own: torch.cuda.nvtx's "step 0", "forward 1" (format argument applied), the mark
"checkpoint"; emit_nvtx's "<op>[, seq = N], op_id = M" (torch/csrc/profiler/util.cpp, getNvtxStr;
sizes and input op ids only with record_shapes), and the backward node of the forward "aten::mm, seq = N"
is "MmBackward0, seq = N" with the same N. All in the default domain (domainId 0), as nsys shows them.
"""
import json
import re
import sqlite3
import sys

OP = re.compile(r"^[^,]+(, seq = (\d+))?, op_id = (\d+)$")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: torch_nvtx_check.py DB [PROJ_JSON]")
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
    rows = db.execute("SELECT start, end, eventType, coalesce(text, (SELECT value FROM StringIds WHERE id = textId)),"
                      " domainId, globalTid FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60)").fetchall()
    ok = True

    def check(cond, label, text):
        nonlocal ok
        ok = ok and cond
        print("%s %s: %s" % ("PASS" if cond else "FAIL", label, text))

    def named(kind, name):
        return [r for r in rows if r[2] == kind and r[3] == name]

    step, fwd, mark = named(59, "step 0"), named(59, "forward 1"), named(34, "checkpoint")
    others = [r for r in rows if r[2] == 59 and r[3] not in ("step 0", "forward 1")]
    nondefault = [r for r in rows if r[4] != 0]
    check(len(step) == 1 and len(fwd) == 1 and len(mark) == 1 and not nondefault, "torch-nvtx-names",
          "step 0 x%d, forward 1 x%d, mark checkpoint x%d; %d rows outside the default domain"
          % (len(step), len(fwd), len(mark), len(nondefault)))
    if len(step) != 1 or len(fwd) != 1:
        return 1
    step, fwd = step[0], fwd[0]
    check(step[0] < fwd[0] < fwd[1] < step[1] and step[5] == fwd[5], "torch-nvtx-nesting",
          "forward 1 inside step 0 on the same thread")

    bad = [r[3] for r in others if not OP.match(r[3])]
    mm = [r for r in others if r[3].startswith("aten::mm, seq = ") and fwd[0] < r[0] and r[1] < fwd[1] and r[5] == fwd[5]]
    seq = OP.match(mm[0][3]).group(2) if len(mm) == 1 else None
    back = [r for r in others if seq is not None and re.match(r"^MmBackward0, seq = %s, op_id = \d+$" % seq, r[3])]
    check(not bad and len(mm) == 1 and len(back) == 1, "emit-nvtx-names",
          "%d op ranges in torch's spelling%s; forward %s; backward %s"
          % (len(others), " (not: %s)" % bad[:3] if bad else "", [r[3] for r in mm], [r[3] for r in back]))

    if len(sys.argv) == 3:
        with open(sys.argv[2]) as f:
            report = json.load(f)
        proj = {(r["Range"][1:] if r["Range"].startswith(":") else r["Range"]): r for r in report}
        for label, name in (("step", "step 0"), ("forward", "forward 1"), ("aten-mm", mm[0][3] if mm else None),
                            ("mm-backward", back[0][3] if back else None)):
            r = proj.get(name)
            good = r is not None and r["Total Proj Time (ns)"] > 0 and r["Total GPU Ops"] >= 1
            check(good, "gpu-proj-" + label, "%r: %s" % (name, "proj %d ns, %d GPU ops" % (
                r["Total Proj Time (ns)"], r["Total GPU Ops"]) if r else "not in nvtx_gpu_proj_sum"))
        if "step 0" in proj and "forward 1" in proj:
            check(proj["step 0"]["Total GPU Ops"] >= proj["forward 1"]["Total GPU Ops"], "gpu-proj-nesting",
                  "step 0 has at least the GPU ops of forward 1 (%d >= %d)"
                  % (proj["step 0"]["Total GPU Ops"], proj["forward 1"]["Total GPU Ops"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
