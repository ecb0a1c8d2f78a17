"""Learning from finished checks: the judge of a decision and the experience memory."""
