"""The context block: the parts plugins give, fitted to a byte budget, and the notes relevant to
a task (the ``relevance`` setting)."""
