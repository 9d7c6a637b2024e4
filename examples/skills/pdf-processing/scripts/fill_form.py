"""Fill the fields of a PDF form from a JSON object (field name -> value)."""
import json
import sys


def main(form, values, out):
    with open(values) as f:
        fields = json.load(f)
    print(f"would fill {len(fields)} fields of {form} into {out}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
