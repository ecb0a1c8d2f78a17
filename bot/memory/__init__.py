"""Experience memory in the running bot: learning from finished episodes and moderators'
actions, and keeping it in the database.
"""
