"""Package the controller FMU (examples/libcosim/controller) from its built library.

    cargo build -p plenum-controller
    python examples/libcosim/package.py target/debug/libplenum_controller.so -o target/fmu-examples/controller.fmu
"""

import argparse
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL_IDENTIFIER = "plenum_controller"


def package(lib, out):
    """Write the .fmu: modelDescription.xml and binaries/linux64/<modelIdentifier>.so."""
    lib, out = Path(lib), Path(out)
    if not lib.is_file():
        raise FileNotFoundError(f"{lib}: build it with `cargo build -p plenum-controller`")
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(HERE / "controller" / "modelDescription.xml", "modelDescription.xml")
        z.write(lib, f"binaries/linux64/{MODEL_IDENTIFIER}.so")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lib", type=Path)
    ap.add_argument("-o", "--output", type=Path, default=Path("controller.fmu"))
    a = ap.parse_args()
    print(package(a.lib, a.output))
