"""Run as a module: python -m scripts.package_skill NAME."""
import sys

from scripts.utils import digest

name = sys.argv[1] if len(sys.argv) > 1 else "skill"
print("USABILITY-OK module import ok name=%s sha256=%s" % (name, digest(name)))
