import sys
OK = "approved​"
print(sys.argv[1:], OK)
