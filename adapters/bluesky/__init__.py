"""Bluesky adapter: summons in, replies out, over a real `atproto.Client`.

The package, one concern a module (each module's docstring says how and why):

- `adapter`: `BlueskyAdapter`, the `adapters.base.Adapter`, assembled from the parts below.
- `client`: credentials, the stored session and logins, one `call` per XRPC request, the
  rate-limit budgets and the repair of bodies with invalid text.
- `errors`: atproto failures as the typed errors of `adapters.base`.
- `notifications`: `listNotifications` paging, the overlap cursor, building each `Summons`.
- `posts`: the post a summons asks about (thread, parent, quote), authors' recent posts.
- `records`: post records read leniently, and their facets and embed refs.
- `views`: post views as `SocialPost` records; who is a bot.
- `replies`: reply record keys, posting a reply, finding it again, the thread-gate re-check.
- `text`: reply text with link facets, and Bluesky's length limits.
- `profile`: the `bot` self-label on the account's profile.
- `times`: timestamps as Bluesky sends them.

Post text and records are untrusted data; nothing here acts on their content.
"""
