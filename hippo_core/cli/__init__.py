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


def main() -> None:
    """Run ``hippo`` on ``sys.argv``, turning a user's error into one line."""
    from hippo_core.base.errors import HippoError

    try:
        _check_text(sys.argv[1:])
        from hippo_core.cli import hot

        code = hot.run(sys.argv[1:])
        if code is None:
            from hippo_core.cli.root import app

            app()
            return
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
