#!/bin/bash
awk '{ total += $1 } END { print total }' /tmp/inputs/numbers.txt > /tmp/result.txt
echo done > notes.txt
