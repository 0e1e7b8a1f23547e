"""The errors a user can cause and fix: each prints as one line, never a traceback."""

from __future__ import annotations


class HippoError(Exception):
    """A problem with the user's input or files: one line, naming what, where, what to do."""

    exit_code = 1


class UsageError(HippoError):
    """A command was called with arguments it cannot use."""

    exit_code = 2
