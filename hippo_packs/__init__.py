"""First-party packs: data directories that hippo installs into a workspace's ``.hippo/packs/``."""
