#!/usr/bin/env python3
"""c_string.py - a text file as one NUL-terminated C char array.

    scripts/c_string.py NAME IN OUT   writes OUT: const char NAME[] = {...};

Used for the server's OpenAPI document (src/server/openapi.json), so that
the document is edited as JSON and built into the binary.
"""
import sys

def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    name, src, out = argv[1:]
    data = open(src, "rb").read()
    data += b"\0"
    lines = []
    # An array, not a string literal: ISO C caps literals at 4095 bytes.
    for i in range(0, len(data), 16):
        # bytes above 127 as character constants: a plain char may be
        # signed, and 226 does not fit one (-Woverflow)
        lines.append("    " + " ".join(("'\\x%02x'," if b > 127 else "%d,") % b
                                       for b in data[i:i + 16]))
    with open(out + ".tmp", "w") as f:
        f.write("/* Generated from %s by scripts/c_string.py. */\n" % src)
        f.write("extern const char %s[];\n" % name)
        f.write("const char %s[] = {\n%s\n};\n" % (name, "\n".join(lines)))
    import os
    os.replace(out + ".tmp", out)
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
