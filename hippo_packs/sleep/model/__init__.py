"""The drafting model: the backend a sleep or a redraft asks, and the server hippo starts
and stops for it (:mod:`.lifecycle`). Below the cycle: it knows the cycle only by the
small :class:`~.lifecycle.Host` protocol."""
