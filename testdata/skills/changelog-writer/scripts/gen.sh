#!/usr/bin/env bash
git log --oneline "${1:-HEAD~10}..HEAD"
