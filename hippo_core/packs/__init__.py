"""Packs as things a team installs, edits and shares: ``pack.toml``, the lock file, themes,
the registry, and the pack commands. The dream's loader is :mod:`hippo_core.dream.packs`."""
