"""The transcript index: ``$HIPPO_HOME/index.sqlite``, through SQLAlchemy.

It holds sessions, turns, the files each turn touched and a full-text table over the
turns' text. It is a cache of the transcript files: ``hippo ingest --full`` rebuilds it.
"""
