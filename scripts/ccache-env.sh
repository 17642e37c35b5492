# Sourced by scripts/test.sh, sanitize.sh and fuzz.sh: the compiler cache, when ccache is installed.
# The cache lives outside the clone (CCACHE_DIR, default ~/.cache/ccache): a second run of a clone, or
# a new clone at the same path (CI), compiles warm. Paths stay absolute (no CCACHE_BASEDIR): with
# relative ones the debug info would name sources relative to the build directory, and the CPU-sampling
# and call-stack tests (rightly) expect the absolute file names a user's build has. CCACHE_NOHASHDIR:
# a compile whose line is the same from another build directory (meant for the wheel test's build of the
# library) is a hit; its object only names that other directory as DW_AT_comp_dir.
# GT_CMAKE_LAUNCHERS: the cmake arguments that use it (empty without ccache, or with GT_NO_CCACHE=1).
GT_CMAKE_LAUNCHERS=()
if command -v ccache >/dev/null && [ "${GT_NO_CCACHE:-0}" != 1 ]; then
  export CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  GT_CMAKE_LAUNCHERS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
