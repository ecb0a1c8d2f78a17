"""The database: the tables (`models`), their migrations (Alembic), the engine and sessions
(`db`), and the queries the bot runs, one module per concern.
"""
