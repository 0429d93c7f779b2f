import base64, json, sys
img = base64.b64decode(sys.argv[1])
open("out.png", "wb").write(img)
meta = json.loads(base64.b64decode(sys.argv[2]))
print(meta)
