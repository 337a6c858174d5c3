EXPECTED = {"greeting": "Hello, world!"}
