from hippo_core.cli import script

script()
