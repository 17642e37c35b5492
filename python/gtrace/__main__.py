"""`python -m gtrace ...` and the `gtrace` command of the wheel: runs the bundled CLI (gtrace/bin/gtrace)
with the same arguments, as if it had been called directly (same exit status, same output)."""
import os
import sys


def cli_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "gtrace")


def main():
    path = cli_path()
    if not os.access(path, os.X_OK):
        sys.stderr.write("gtrace: %s is missing: this gtrace package has no CLI (a source checkout? "
                         "install the wheel, or build with cmake and run build/bin/gtrace)\n" % path)
        return 127
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
