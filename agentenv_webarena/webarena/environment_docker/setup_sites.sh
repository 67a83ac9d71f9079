#!/usr/bin/env bash
# The URL fixes WebArena's images need after each (re)start: their stored base URLs must name the host
# the browser reaches them at. NOT RUN on our development machines (no Docker there).
#   WEBARENA_HOST=my-server.example.com bash setup_sites.sh
set -euo pipefail
host="${WEBARENA_HOST:?set WEBARENA_HOST to the hostname or IP the env server reaches the sites at}"

# Storefront: Magento base URL (store config + the secure base URL row), then flush the cache.
docker exec shopping /var/www/magento2/bin/magento setup:store-config:set --base-url="http://${host}:7770"
docker exec shopping mysql -u magentouser -pMyPassword magentodb -e \
  "UPDATE core_config_data SET value='http://${host}:7770/' WHERE path = 'web/secure/base_url';"
docker exec shopping /var/www/magento2/bin/magento cache:flush

# Admin: same for port 7780, and turn off the forced password change that would block the admin login.
docker exec shopping_admin php /var/www/magento2/bin/magento config:set admin/security/password_is_forced 0
docker exec shopping_admin php /var/www/magento2/bin/magento config:set admin/security/password_lifetime 0
docker exec shopping_admin /var/www/magento2/bin/magento setup:store-config:set --base-url="http://${host}:7780"
docker exec shopping_admin mysql -u magentouser -pMyPassword magentodb -e \
  "UPDATE core_config_data SET value='http://${host}:7780/' WHERE path = 'web/secure/base_url';"
docker exec shopping_admin /var/www/magento2/bin/magento cache:flush

# GitLab: external_url, then reconfigure (takes minutes; the site answers 502 until it is done).
docker exec gitlab sed -i "s|^external_url.*|external_url 'http://${host}:8023'|" /etc/gitlab/gitlab.rb
docker exec gitlab gitlab-ctl reconfigure

echo "export SHOPPING=http://${host}:7770 SHOPPING_ADMIN=http://${host}:7780/admin REDDIT=http://${host}:9999"
echo "export GITLAB=http://${host}:8023 WIKIPEDIA=http://${host}:8888/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing"
echo "export MAP=http://${host}:3000 HOMEPAGE=http://${host}:4399"
