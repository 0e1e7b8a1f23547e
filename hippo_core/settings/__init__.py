"""The settings: the values the rest of hippo reads, the file ``.hippo/settings.toml``, its
schema, the tables plugins own, and what a URL in the settings may hold."""
