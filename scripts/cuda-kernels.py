#!/usr/bin/env python3
"""Lists the CUDA device code that a program or shared library carries, without cuobjdump.

  scripts/cuda-kernels.py [--arch sm_80,sm_90] [--names FILE] FILE...

nvcc embeds fat binaries in the host file's .nv_fatbin section: containers (one per
translation unit with device code, plus the CUDA runtime's) of images, each an ELF (SASS
for one sm_XX) or PTX (for one compute_XX, zstd-compressed by default). This reads them,
and in every ELF image the kernels (functions marked as entry points), and prints per
architecture how many images and kernels there are and how many kernels instantiate
Tributary's own code (a demangled name containing "tributary::"). --names writes every
kernel as "sm_XX demangled-name", one a line. With --arch it fails unless each of those
architectures holds Tributary's kernels, all of them the same set of names.
"""
import argparse
import collections
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
STT_FUNC, STO_CUDA_ENTRY = 2, 0x10
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def sections(elf):
    """(name, offset, size, type, link, entsize) of every section of an ELF64 file."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4]
    out = []
    for name, typ, _flags, _addr, off, size, link, _info, _align, entsize in raw:
        start = names_at + name
        out.append((elf[start:elf.index(b"\0", start)].decode(), off, size, typ, link, entsize))
    return out


def cubin_kernels(cubin):
    """The mangled names of the kernels (entry points) in one ELF image."""
    secs = sections(cubin)
    kernels = []
    for _name, off, size, typ, link, entsize in secs:
        if typ != 2:  # SHT_SYMTAB
            continue
        strtab = secs[link][1]
        for at in range(off, off + size, entsize or 24):
            st_name, st_info, st_other = struct.unpack_from("<IBB", cubin, at)
            if st_info & 0xF == STT_FUNC and st_other & STO_CUDA_ENTRY:
                start = strtab + st_name
                kernels.append(cubin[start:cubin.index(b"\0", start)].decode())
    return kernels


def images(path):
    """(kind, arch, payload) of every image in the file's fat binaries."""
    with open(path, "rb") as f:
        elf = f.read()
    found = [(off, size) for name, off, size, *_ in sections(elf) if name == ".nv_fatbin"]
    if not found:
        raise ValueError("no .nv_fatbin section: no CUDA device code")
    out = []
    for off, size in found:
        fatbin, pos = elf[off:off + size], 0
        while pos + 16 <= len(fatbin):
            magic, _version, header, body = struct.unpack_from("<IHHQ", fatbin, pos)
            if magic != FATBIN_MAGIC:  # containers are 8-byte aligned, padded between
                pos += 8
                continue
            entry, end = pos + header, pos + header + body
            while entry < end:
                kind, _flags, header_size, payload = struct.unpack_from("<HHIQ", fatbin, entry)
                arch = struct.unpack_from("<I", fatbin, entry + 28)[0]
                data = fatbin[entry + header_size:entry + header_size + payload]
                out.append((kind, arch, data))
                entry += header_size + payload
            pos = end
    return out


def demangle(names):
    if not names:
        return []
    run = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                         text=True, check=True)
    return run.stdout.splitlines()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", help="architectures that must hold Tributary's kernels")
    parser.add_argument("--names", help="write 'sm_XX kernel' lines to this file")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    ok = True
    lines = []
    for path in args.files:
        label = path.rsplit("/", 1)[-1]
        try:
            imgs = images(path)
        except (OSError, ValueError) as err:
            print(f"{label}: {err}", file=sys.stderr)
            ok = False
            continue
        elf_count = collections.Counter()
        with_kernels = collections.Counter()
        ptx_count = collections.Counter()
        kernels = collections.defaultdict(list)
        for kind, arch, data in imgs:
            if kind == KIND_PTX:
                ptx_count[f"compute_{arch}"] += 1
            elif kind == KIND_ELF:
                sm = f"sm_{arch}"
                elf_count[sm] += 1
                if data[:4] == ZSTD_MAGIC:
                    print(f"{label}: a compressed {sm} image (built with fatbin compression"
                          " of all images): its kernels are not counted", file=sys.stderr)
                    ok = False
                    continue
                found = cubin_kernels(data)
                with_kernels[sm] += bool(found)
                kernels[sm].extend(found)
        ours = {}
        for sm in sorted(elf_count, key=lambda s: int(s[3:])):
            names = demangle(kernels[sm])
            mine = sorted(n for n in names if "tributary::" in n)
            ours[sm] = mine
            lines.extend(f"{label} {sm} {n}" for n in names)
            print(f"{label}: {sm}: {elf_count[sm]} ELF images ({with_kernels[sm]} with kernels), "
                  f"{len(names)} kernels, {len(mine)} of them instantiate Tributary's code")
        for ptx, n in sorted(ptx_count.items()):
            print(f"{label}: {ptx}: {n} PTX images (compressed; kernels not counted)")
        if args.arch:
            wanted = args.arch.split(",")
            for sm in wanted:
                if not ours.get(sm):
                    print(f"{label}: no kernel of Tributary's for {sm}", file=sys.stderr)
                    ok = False
            sets = {sm: set(ours.get(sm, [])) for sm in wanted}
            first = wanted[0]
            for sm in wanted[1:]:
                if sets[sm] != sets[first]:
                    print(f"{label}: Tributary's kernels differ between {first} and {sm}: "
                          f"{len(sets[first] - sets[sm])} only in {first}, "
                          f"{len(sets[sm] - sets[first])} only in {sm}", file=sys.stderr)
                    ok = False
    if args.names:
        with open(args.names, "w") as f:
            f.write("".join(line + "\n" for line in lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
