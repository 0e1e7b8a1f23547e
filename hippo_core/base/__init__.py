"""What every room uses: the errors a user can fix, the clock, the hot path's value classes,
regular expressions, printable text, findings, install hints and outbound requests."""
