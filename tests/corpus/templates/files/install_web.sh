#!/bin/bash -v
apt-get -y install nginx
echo "served by $(hostname)" > /var/www/html/index.html
wc_notify --data-binary '{"status": "SUCCESS", "reason": "web server up"}'
