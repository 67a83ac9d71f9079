#!/usr/bin/env bash
# Reset WebArena's sites to their published state: tasks change site state (orders, posts, merge
# requests) and the images have no reset of their own, so remove the containers, start fresh ones from
# the images, wait for them, and re-apply the URL fixes. Run it between full evaluations (WebArena resets
# after all 812 tasks). NOT RUN on our development machines (no Docker there).
#   WEBARENA_HOST=my-server.example.com bash reset_sites.sh
set -euo pipefail
cd "$(dirname "$0")"
: "${WEBARENA_HOST:?set WEBARENA_HOST (see setup_sites.sh)}"
compose="docker compose -f docker-compose.webarena.yml"
$compose down --remove-orphans
$compose up -d
wait_for() {  # url, seconds
  local deadline=$((SECONDS + $2))
  until curl -fsS -o /dev/null "$1"; do
    [ $SECONDS -lt $deadline ] || { echo "ERROR: $1 did not answer within $2 s" >&2; exit 1; }
    sleep 5
  done
}
wait_for "http://localhost:7770" 300
wait_for "http://localhost:7780" 300
wait_for "http://localhost:9999" 300
bash setup_sites.sh
wait_for "http://localhost:8023/users/sign_in" 900   # GitLab boots and reconfigures for several minutes
echo "sites reset; refresh the cookies: python -m agentenv_webarena.webarena.auto_login --site_list shopping shopping_admin reddit gitlab"
