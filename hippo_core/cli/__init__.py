"""The ``hippo`` console script.

The commands an agent runs on every session and prompt (``hippo hook ...``, ``hippo
context``) and ``hippo ingest`` are read by :mod:`hippo_core.cli.hot` before typer, click
or any plugin is imported; everything else, and any call of those the fast reader does not
understand (``--help``, a bad option), goes to the full command line in
:mod:`hippo_core.cli.root`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


#: The commands an agent waits for, which the console script ends without tearing the
#: interpreter down (see :func:`script`).
QUICK = ("hook", "context")


def script() -> None:
    """The ``hippo`` console script: :func:`main`, as a process of its own.

    An agent waits for ``hippo hook ...`` and ``hippo context`` on every session and prompt.
    What they make is short-lived, so the script runs them with the cyclic garbage collector
    off, and once the answer is written and flushed it leaves at once (:func:`os._exit`):
    tearing down the interpreter, module by module and object by object, would cost the
    agent about a tenth of the call. Every file they write is closed by then, and nothing
    of theirs waits for the interpreter's exit (no ``atexit``, no buffered file)."""
    main(quick=len(sys.argv) > 1 and sys.argv[1] in QUICK)


def main(*, quick: bool = False) -> None:
    """Run ``hippo`` on ``sys.argv``, turning a user's error into one line. With ``quick``
    (a hot command run by the console script), as :func:`script` says."""
    from hippo_core.base.errors import HippoError

    try:
        _check_text(sys.argv[1:])
        from hippo_core.cli import hot

        if quick:
            import gc

            gc.disable()
        code = hot.run(sys.argv[1:])
        if code is None:
            from hippo_core.cli.root import app

            if quick:
                gc.enable()
            app()
            return
        if quick:
            import os

            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    except HippoError as exc:
        from hippo_core.base.terminal import printable

        sys.stderr.write(f"error: {printable(str(exc))}\n")
        raise SystemExit(exc.exit_code) from None
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`hippo context | head`): nothing to say
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    if code:
        raise SystemExit(code)


def _check_text(args: list[str]) -> None:
    """Refuse an argument that is not UTF-8 (Python hands its bytes over as surrogates):
    what hippo keeps is UTF-8 text, and such an argument could not be written."""
    for at, arg in enumerate(args, 1):
        if not arg.isascii():
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                from hippo_core.base.errors import UsageError

                raw = arg.encode("utf-8", "surrogateescape")
                raise UsageError(
                    f"argument {at} ({raw!r}) is not UTF-8 text; give it in UTF-8"
                ) from None


def __getattr__(name: str) -> Any:
    if name == "app":  # the typer app, for the docs' generator and the tests
        from hippo_core.cli.root import app

        return app
    raise AttributeError(f"module 'hippo_core.cli' has no attribute {name!r}")
