"""X Community Notes: the AI Note Writer API as a platform adapter (`x_notes`)."""
