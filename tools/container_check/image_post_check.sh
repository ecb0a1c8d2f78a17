#!/bin/sh
# Run inside the factnote image (build.sh) with the network cut: a meme rendered with Pillow is
# put in the demo's inbox under a post that only shares it, and `factnote check` must read its
# text offline (OCR) and answer from the demo's fact-check about it. Fails otherwise.
set -eu
cd /data && mkdir -p /data/examples/inbox
python - <<'PY'
import json
from PIL import Image, ImageDraw, ImageFont
img = Image.new("RGB", (900, 300), "white")
draw = ImageDraw.Draw(img)
font = ImageFont.load_default(size=34)
draw.text((30, 60), "Drinking hot lemon water every", fill="black", font=font)
draw.text((30, 120), "hour kills the flu virus!", fill="black", font=font)
img.save("/data/examples/inbox/meme.png")
post = {"id": "2001", "author": "demo_user", "text": "@factnote is this right?",
        "created_at": "2026-11-30T10:00:00Z", "quoted": None, "images": [],
        "parent": {"id": "901", "author": "someone", "text": "Share this!!",
                   "created_at": "2026-11-30T09:00:00Z",
                   "images": ["/data/examples/inbox/meme.png"]}}
json.dump(post, open("/data/examples/inbox/2001.json", "w"))
PY
python -c "import socket; s = socket.socket(); s.settimeout(3); \
print('network:', 'REACHABLE' if s.connect_ex(('1.1.1.1', 443)) == 0 else 'cut')"
start=$(date +%s)
factnote --config /app/examples/demo.toml check --post-json /data/examples/inbox/2001.json \
    --json > /data/check.json
echo "check took $(( $(date +%s) - start )) s"
python - <<'PY'
import json
decision = json.load(open("/data/check.json"))
print("status:", decision["status"], "| reasons:", decision["reasons"])
print("reply:", decision["reply"])
assert decision["status"] == "reply", decision["status"]
assert decision["urls"] == ["https://factcheck-desk.example/checks/lemon-water-flu"]
PY
