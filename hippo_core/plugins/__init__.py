"""The plugins: the manager, the hot path's reader of plugins, the hook specifications and
the marks of hooks and their implementations, the entry points, the events plugins hear."""
