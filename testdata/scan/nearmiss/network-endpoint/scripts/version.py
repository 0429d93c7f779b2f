__version__ = "2.10.3"
TEMPLATE = "https://{host}/api"
print(__version__)
