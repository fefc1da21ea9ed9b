"""The Plenum libraries an FMU carries, shipped in this package (``plenum/_lib/``)."""

from pathlib import Path

LIB_DIR = Path(__file__).resolve().parent / "_lib"
FILES = {"linux64": "libplenum.so", "win64": "plenum.dll"}


def library_paths(platforms=None):
    """The library of each platform (default: every one this package ships)."""
    if isinstance(platforms, str):
        platforms = [p for p in platforms.split(",") if p]
    if platforms is None:
        found = [str(LIB_DIR / p / f) for p, f in FILES.items() if (LIB_DIR / p / f).is_file()]
        if not found:
            from plenum._errors import PlenumError

            raise PlenumError(f"this installation of plenum ships no FMU library (looked in {LIB_DIR})")
        return found
    out = []
    for p in platforms:
        if p not in FILES:
            raise ValueError(f"unknown platform {p!r} (known: {', '.join(FILES)})")
        path = LIB_DIR / p / FILES[p]
        if not path.is_file():
            from plenum._errors import PlenumError

            raise PlenumError(f"this installation of plenum ships no {p} library ({path} is missing)")
        out.append(str(path))
    return out
