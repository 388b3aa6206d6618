"""Many (model, benchmark) evaluation jobs: which ones ``evaluate-paper`` runs and the folders each reads
(:mod:`.planner`), and running them here or spread over several devices (:mod:`.scheduling`)."""
