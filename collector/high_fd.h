// MoveFdHigh: gtrace's own descriptors live above the range applications reuse. Daemons, launchers
// and test harnesses dup2 their log over fds 3..19, and open() always returns the lowest free
// number; a stream descriptor there would receive the application's writes, or gtrace would write
// into the application's file (issue 28, item 1). Any thread; not async-signal-safe (getrlimit).
#pragma once

namespace gt {

// Duplicates `fd` to the lowest free descriptor at or above a high floor (64 below the soft
// RLIMIT_NOFILE, at most 960), close-on-exec, and closes `fd`. Returns the new descriptor, or `fd`
// unchanged when no high one is free.
int MoveFdHigh(int fd);

}  // namespace gt
