#!/usr/bin/env python3
"""Writes the seeds of parse_envelope and router_unknown_action from the contract's vectors
(ERRORS.md version 2.1: ../shared/spec/vectors.json and the project's tests/vectors/*.json),
one file per case, named by its id. Seeds that no vector makes (own-*.txt, own-*.xml) are kept.

    python3 fuzz/seeds/refresh.py      # from the checkout's root
"""
import glob
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
files = [os.path.join(root, "..", "shared", "spec", "vectors.json")]
files += sorted(glob.glob(os.path.join(root, "tests", "vectors", "*.json")))


def write(target, name, data):
    with open(os.path.join(here, target, name), "wb") as f:
        f.write(data.encode("utf-8"))


for target in ("parse_envelope", "router_unknown_action"):
    folder = os.path.join(here, target)
    for name in os.listdir(folder):
        if not name.startswith("own-"):
            os.remove(os.path.join(folder, name))

for path in files:
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    for case in cases:
        kind, expected = case["kind"], case["expected"]
        if kind == "parse":
            write("parse_envelope", case["id"] + ".txt", case["input"]["text"])
        elif "text" in expected:
            write("parse_envelope", case["id"] + ".xml", expected["text"])
        if kind == "routing":
            write("router_unknown_action", case["id"] + ".json",
                  json.dumps(case["input"], ensure_ascii=False))
