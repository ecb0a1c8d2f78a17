"""The running bot: platforms in, requests through the pipeline, replies out, people in the loop."""
