"""Local servers standing in for the far side of a network boundary."""
