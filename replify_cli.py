"""The ``replify`` command's entry point ([project.scripts]): a module outside the package, so that
nothing of replify is imported before it can catch Ctrl-C. ``import replify`` takes a moment (numpy,
the plugins); an interrupt during it ends the command quietly, as one during the command does
(:func:`replify.cli.main`): one line on stderr and exit status 130, no traceback."""

import sys


def main() -> int:
    try:
        # imported here, not at the top: the one place where the import itself must sit inside the
        # try, since a Ctrl-C while replify loads would otherwise print a traceback of the import
        from replify.cli import main as run
    except KeyboardInterrupt:
        print("replify: interrupted", file=sys.stderr)
        return 130
    try:
        return run()
    except KeyboardInterrupt:  # after run() caught its own: while parsing the arguments, say
        print("replify: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
