print("pack")
