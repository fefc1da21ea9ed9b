"""Check that no shared object in a wheel needs a glibc symbol version newer than a limit.

    python glibc_versions.py WHEEL 2.17

Reads each ELF's version needs (.gnu.version_r, with pyelftools) and prints the newest
GLIBC_x.y each needs; exits 1 when one is above the limit.
"""

import io
import sys
import zipfile

from elftools.elf.elffile import ELFFile


def newest_glibc(data):
    elf = ELFFile(io.BytesIO(data))
    newest = (0, 0)
    for section in elf.iter_sections():
        if section.name != ".gnu.version_r":
            continue
        for _, auxes in section.iter_versions():
            for aux in auxes:
                name = aux.name
                if name.startswith("GLIBC_") and name[6:7].isdigit():
                    v = tuple(int(x) for x in name[6:].split("."))
                    newest = max(newest, v)
    return newest


def main(wheel, limit):
    limit = tuple(int(x) for x in limit.split("."))
    worst = 0
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            data = z.read(name)
            if not data.startswith(b"\x7fELF"):
                continue
            v = newest_glibc(data)
            ok = v <= limit
            print(f"{name}: newest GLIBC symbol version needed {'.'.join(map(str, v))} "
                  f"({'≤' if ok else '>'} {'.'.join(map(str, limit))})")
            worst |= not ok
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
