"""hippo's version: one place, read by the package, the cache keys and pyproject.toml."""

#: hippo's version.
__version__ = "0.1.0"
