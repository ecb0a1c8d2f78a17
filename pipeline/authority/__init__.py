"""Evidence from authorities' own statements (their timelines), searched before the web."""
