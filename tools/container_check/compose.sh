#!/usr/bin/env bash
# docker-compose.yml, run for real on this machine: PostgreSQL, one scheduler, N workers and
# the web app, then summons dropped into the shared inbox until each has a decision, with the
# workers that made them. Run from the repository root after build.sh (which builds the
# `factnote` image and, where Docker Hub is out of reach, the stand-in base images).
#
#   tools/container_check/compose.sh [WORKERS] [SUMMONS]
#
# It drives Compose through COMPOSE (default: `docker compose`; on a machine without a Docker
# engine, podman-compose over podman). Everything it starts is removed at the end.
set -euo pipefail
workers=${1:-4}
summons=${2:-24}
compose=${COMPOSE:-docker compose}
engine=${ENGINE:-docker}
project=fncheck
export POSTGRES_PASSWORD="check-$RANDOM$RANDOM"
# Container names differ between Compose implementations (fncheck-web-1, fncheck_web_1).
names() { $engine ps -aq --filter "name=${project}[-_]$1"; }
cleanup() {
    $compose -p $project down -v >/dev/null 2>&1 || true
    # Replicas that `down` does not know of (podman-compose and --scale) would keep volumes.
    names "" | xargs -r $engine rm -f >/dev/null 2>&1 || true
    $engine volume ls -q --filter "name=${project}_" | xargs -r $engine volume rm -f >/dev/null || true
}
trap cleanup EXIT

cleanup
$compose -p $project up -d --no-build --scale worker="$workers" >/dev/null
psql() { $engine exec "$(names postgres)" psql -U factnote -d factnote -Atc "$1"; }
echo "waiting for the web app's /healthz (its own health check) and the migrated database"
for _ in $(seq 120); do
    $engine exec "$(names web)" python -m bot.ops.healthcheck >/dev/null 2>&1 \
        && psql "SELECT 1 FROM alembic_version" 2>/dev/null | grep -q 1 && break
    sleep 2
done
$engine exec "$(names web)" python -m bot.ops.healthcheck
curl -fsS -o /dev/null http://127.0.0.1:8000/healthz && echo "published port 8000 answers" \
    || echo "published port 8000 does not answer from the host"

# Summons in the local inbox format, made now (older ones are skipped), each asking about one of
# the demo's posts; the volume is the one every service mounts at /data.
volume=$($engine volume inspect ${project}_factnote-data --format '{{.Mountpoint}}')
python3 - "$volume/inbox" "$summons" <<'PY'
import json, sys
from datetime import UTC, datetime
from pathlib import Path
inbox, count = Path(sys.argv[1]), int(sys.argv[2])
inbox.mkdir(parents=True, exist_ok=True)
now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
demo = sorted(Path("examples/inbox").glob("*.json"))
for n in range(count):
    post = json.loads(demo[n % len(demo)].read_text())
    post["id"] = f"{9000 + n}"
    post["author"] = f"compose_user_{n}"
    post["created_at"] = now
    if post.get("parent"):
        post["parent"]["created_at"] = now
    (inbox / f"{9000 + n}.json").write_text(json.dumps(post))
PY
chown -R 10001:10001 "$volume/inbox"
echo "dropped $summons summons into the inbox; waiting for their decisions"
start=$(date +%s)
for _ in $(seq 300); do
    decided=$(psql "SELECT count(DISTINCT request_id) FROM decisions" || echo 0)
    [ "${decided:-0}" -ge "$summons" ] && break
    sleep 2
done
echo "decisions: ${decided:-0} of $summons in $(( $(date +%s) - start )) s"
echo "requests by state:"; psql "SELECT state, count(*) FROM requests GROUP BY state ORDER BY state"
echo "decisions by worker (request events into a final state):"
psql "SELECT actor, count(*) FROM request_events WHERE actor LIKE 'worker:%' AND to_state IN ('dry_run','needs_llm','abstained','awaiting_review','posted','failed') GROUP BY actor ORDER BY actor"
echo "workers that fell back from ONNX to torch (0 expected):"
for id in $(names worker); do $engine logs "$id" 2>&1 | grep -c "ONNX embedding unavailable" || true; done
[ "${decided:-0}" -ge "$summons" ]
