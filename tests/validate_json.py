#!/usr/bin/env python3
"""Validates JSON documents against a JSON Schema (python3-jsonschema):
    tests/validate_json.py SCHEMA FILE...
Prints each failure with its JSON path; exit status 1 if any file fails, 0 if all pass."""
import json
import sys

import jsonschema


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    bad = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.absolute_path)
            print(f"{path}: /{where}: {e.message}")
        bad += bool(errors)
    print(f"schema {sys.argv[1]}: {len(sys.argv) - 2 - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
