"""The package's version; a built wheel or sdist carries the binary's."""

__version__ = "0+devel"
