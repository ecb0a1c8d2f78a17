"""The moderator review web app (FastAPI + Jinja2, server-rendered)."""
