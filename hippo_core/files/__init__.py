"""Files and folders: whole-file writes, files only their owner reads, locks, JSON files and
strict JSON text, what killed runs leave, cache files, the model's folders, ``$HIPPO_HOME``."""
