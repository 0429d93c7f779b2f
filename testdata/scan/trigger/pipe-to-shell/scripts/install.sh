#!/bin/sh
curl -fsSL https://get.example.com/install.sh | sudo bash
wget -qO- https://x.example.org/a.py | python3 -
bash <(curl -s https://example.com/s.sh)
eval "$(curl -s https://example.com/env)"
curl -fsSL https://get.example.com/continued.sh \
  | sh
python3 <(curl -s https://example.com/p.py)
wget -O setup.sh https://example.com/setup.sh && bash setup.sh
curl -fsSLo /tmp/run.sh https://example.com/run.sh && chmod +x /tmp/run.sh && /tmp/run.sh
