"""The review app's routes, one router per area: `ops` (health and metrics, open), `auth`
(login and logout), `queue` (the queue, bulk actions and the decisions log), `item` (one
request and its actions) and `admin` (settings overrides and users)."""
