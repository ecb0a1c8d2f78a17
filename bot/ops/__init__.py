"""Running the bot: wiring, the service and its scheduler, the queue's workers, the leader,
start-up lines, metrics, the health check and scheduled jobs.
"""
