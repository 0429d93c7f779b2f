import os
from playwright.sync_api import sync_playwright
cache = os.path.expanduser("~/.cache/check-skill")
region = os.environ.get("AWS_REGION", "us-east-1")
with sync_playwright() as p:
    browser = p.chromium.launch(headless=True)
    browser.close()
skills = os.path.expanduser("~/.claude/skills")
term = os.path.expanduser("~/.config/ghostty/config")
dash = os.path.expanduser("~/.config/gh-dash/config.yml")
# npm reads the registry from .npmrc in the project; this script does not.
project_rc = os.path.join(project_dir, ".npmrc")
dist_rc = os.path.join("dist", ".pypirc")
