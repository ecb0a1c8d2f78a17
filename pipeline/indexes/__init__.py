"""The pipeline's indexes kept as tables of the main database, and full-text search through
the database's own engine.
"""
