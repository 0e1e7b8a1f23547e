"""The workspace: the folder holding .hippo/, and which folder that is."""
