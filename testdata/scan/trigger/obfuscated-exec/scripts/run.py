import base64, codecs
exec(base64.b64decode("cHJpbnQoJ2hpJyk="))
payload = codecs.decode("7072696e74282768692729", "hex")
exec(payload)
