#!/usr/bin/env python3
"""Check a GGUF file's structure without any third-party package.

usage: scripts/gguf_check.py FILE [--arch ARCH] [--file-type N]

Reads the header (magic "GGUF", version), every metadata key/value and every
tensor-info record, then checks that the tensor data the header describes fits
the file exactly (catches truncated or mis-ordered chunks). Prints KEY=VALUE
lines (architecture, name, file_type, tensors, ...) on stdout. Exits 1 with a
message on stderr if the file is malformed or does not match --arch/--file-type.
"""
import os
import struct
import sys
from collections import Counter

# ggml_type -> (block size in elements, bytes per block)
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8),
    28: ("F64", 1, 8), 30: ("BF16", 1, 2),
}
# llama_ftype (general.file_type) names for the common ones
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
              10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S",
              15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 32: "BF16"}

SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
          10: "<Q", 11: "<q", 12: "<d"}


class Bad(Exception):
    pass


class Reader:
    def __init__(self, f, size):
        self.f, self.size = f, size

    def read(self, n):
        b = self.f.read(n)
        if len(b) != n:
            raise Bad("unexpected end of file in the header")
        return b

    def unpack(self, fmt):
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self):
        n = self.unpack("<Q")
        if n > 1 << 24:
            raise Bad("implausible string length %d" % n)
        return self.read(n).decode("utf-8", errors="replace")

    def value(self, t, keep=True):
        if t in SCALAR:
            return self.unpack(SCALAR[t])
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.unpack("<I"), self.unpack("<Q")
            if et in SCALAR and not keep:      # skip big arrays fast
                self.f.seek(struct.calcsize(SCALAR[et]) * n, 1)
                return "[%d]" % n
            vals = [self.value(et, keep) for _ in range(n)]
            return vals if keep else "[%d]" % n
        raise Bad("unknown metadata value type %d" % t)


def check(path):
    size = os.path.getsize(path)
    info = {"file": path, "file_size": size}
    with open(path, "rb") as f:
        r = Reader(f, size)
        if r.read(4) != b"GGUF":
            raise Bad("not a GGUF file (bad magic)")
        ver = r.unpack("<I")
        if ver not in (2, 3):
            raise Bad("unsupported GGUF version %d" % ver)
        n_tensors, n_kv = r.unpack("<Q"), r.unpack("<Q")
        info.update(gguf_version=ver, tensors=n_tensors, kv=n_kv)
        meta = {}
        for _ in range(n_kv):
            key = r.string()
            t = r.unpack("<I")
            small = key.startswith("general.") or key.endswith(
                (".context_length", ".block_count", ".embedding_length")) or key == "tokenizer.ggml.model"
            meta[key] = r.value(t, keep=small)
        types = Counter()
        end = 0
        for _ in range(n_tensors):
            r.string()
            nd = r.unpack("<I")
            dims = [r.unpack("<Q") for _ in range(nd)]
            tt, off = r.unpack("<I"), r.unpack("<Q")
            if tt not in GGML_TYPES:
                end = None
                types["type%d" % tt] += 1
                continue
            name, blk, bsz = GGML_TYPES[tt]
            types[name] += 1
            n = 1
            for d in dims:
                n *= d
            if end is not None:
                end = max(end, off + n // blk * bsz)
        align = meta.get("general.alignment", 32)
        pos = f.tell()
        data_start = (pos + align - 1) // align * align
    if end is not None:
        need = data_start + end
        info["data_end"] = need
        if size < need:
            raise Bad("file is truncated: tensor data needs %d bytes, file has %d" % (need, size))
        if size >= need + align:
            raise Bad("file has %d unexpected trailing bytes after the tensor data" % (size - need))
    arch = meta.get("general.architecture")
    ft = meta.get("general.file_type")
    info.update(architecture=arch, name=meta.get("general.name"),
                size_label=meta.get("general.size_label"),
                file_type=ft, file_type_name=FILE_TYPES.get(ft, "?") if ft is not None else None,
                context_length=meta.get("%s.context_length" % arch),
                block_count=meta.get("%s.block_count" % arch),
                embedding_length=meta.get("%s.embedding_length" % arch),
                tokenizer=meta.get("tokenizer.ggml.model"),
                has_chat_template="tokenizer.chat_template" in meta,
                tensor_types=",".join("%s:%d" % kv for kv in sorted(types.items())))
    return info


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    path, want_arch, want_ft = args[0], None, None
    i = 1
    while i < len(args):
        if args[i] == "--arch" and i + 1 < len(args):
            want_arch = args[i + 1]; i += 2
        elif args[i] == "--file-type" and i + 1 < len(args):
            want_ft = int(args[i + 1]); i += 2
        else:
            print("gguf_check: bad argument %r" % args[i], file=sys.stderr); return 2
    try:
        info = check(path)
    except (Bad, OSError, struct.error) as e:
        print("gguf_check: %s: %s" % (path, e), file=sys.stderr)
        return 1
    for k, v in info.items():
        print("%s=%s" % (k, v))
    if want_arch is not None and info["architecture"] != want_arch:
        print("gguf_check: %s: general.architecture is %r, expected %r"
              % (path, info["architecture"], want_arch), file=sys.stderr)
        return 1
    if want_ft is not None and info["file_type"] != want_ft:
        print("gguf_check: %s: general.file_type is %r, expected %d"
              % (path, info["file_type"], want_ft), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
