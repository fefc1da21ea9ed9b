"""The ``plenum`` command (a console entry point): the command line of the Rust binary
(``plenum run | check | describe``), compiled into the extension and run in-process."""

import signal
import sys


def main():
    from plenum import _plenum

    # Ctrl-C stops a run at once, as it stops the binary (Python's handler would wait for the
    # extension to return).
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(_plenum.run_cli(["plenum", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
