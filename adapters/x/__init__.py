"""The X (Twitter) adapter: mentions in, replies out, through tweepy's API v2 `Client`.

The package, one concern a module (each module's docstring says what the platform allows and
how that shapes it):

- `adapter`: `XAdapter`, the `adapters.base.Adapter`, assembled from the parts below.
- `client`: credentials, the tweepy client (timeouts, token redaction), one `call` per request
  with retries of server errors, and the rate budgets seen.
- `errors`: tweepy failures as typed errors; which 403 refuses a reply and which stops posting.
- `budgets`: rate-limit headers: budgets per endpoint, and when a 429 lifts.
- `api`: the API's JSON as far as the adapter reads it, each item read on its own.
- `mentions`: the bot's mentions as `Summons`: paging, typed mentions, targets.
- `posts`: posts and their expansions as `SocialPost` records; a user's timeline; who is a bot.
- `replies`: posting a reply to the mention, and finding it again on the bot's timeline.
"""
