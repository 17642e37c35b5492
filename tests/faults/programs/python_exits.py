"""python_exits.py MODE: NVTX ranges, then leave the way MODE says.
  os_exit   push "before", sleep 0.5 s (past a flush), push "after-sleep", os._exit(3) at once  -- like
            multiprocessing workers
  sigint    push "waiting" and sleep until interrupted (the test sends SIGINT); KeyboardInterrupt
            propagates, so Python ends the way it does without gtrace
"""
import os
import sys
import time

import nvtx

mode = sys.argv[1]
nvtx.push_range("before")
nvtx.pop_range()
if mode == "os_exit":
    time.sleep(0.5)
    nvtx.push_range("after-sleep")
    nvtx.pop_range()
    os._exit(3)
elif mode == "sigint":
    nvtx.push_range("waiting")
    print("ready", flush=True)
    time.sleep(30)
