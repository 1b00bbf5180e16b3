# Reads `culeak dump` output (JSON Lines) and prints each allocation as
# "size tid frame|frame|..." with Python frames as file:line:function (file's base name)
# and native frames as "n", innermost first.
import json
import os
import sys

py = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "pyframe":
        py[int(r["ip"], 16)] = "%s:%d:%s" % (os.path.basename(r["file"]), r["line"], r["function"])
    elif r["type"] == "note":
        print("note", r["text"])
    elif r["type"] == "mark":
        print("mark", r["label"], r["flags"])
    elif r["type"] == "alloc":
        print(r["size"], r["tid"], "|".join(py.get(int(ip, 16), "n") for ip in r["stack"]))
