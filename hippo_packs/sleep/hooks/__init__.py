"""What hippo's own commands call into through the kernel's hooks: the kinds of change the
applier lands (:mod:`.kinds`), drafts in ``hippo review`` (:mod:`.queue`), the readers of
dream passes (:mod:`.readers`), ``hippo doctor``'s checks (:mod:`.doctor`) and ``hippo eval
pack sleep`` (:mod:`.evals`)."""
