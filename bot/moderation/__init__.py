"""People in the loop: moderator actions on drafts and the review app's accounts."""
