"""From evidence to a reply: the verdict, the writer, the platform formats and the guard
every draft must pass.
"""
