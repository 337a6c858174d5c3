#!/bin/bash
printf 'greeting: "Hello, world!"\n' > /app/config.yaml
