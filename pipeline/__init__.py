"""The correction pipeline: one post in, one decision out, no platform and no database."""
