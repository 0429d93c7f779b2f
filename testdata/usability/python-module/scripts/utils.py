"""Helpers imported as scripts.utils, as packaged skills do."""
import hashlib


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]
