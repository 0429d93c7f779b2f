#!/bin/sh
curl -fsSL https://get.example.com/install.sh | sudo bash
wget -qO- https://x.example.org/a.py | python3 -
bash <(curl -s https://example.com/s.sh)
eval "$(curl -s https://example.com/env)"
