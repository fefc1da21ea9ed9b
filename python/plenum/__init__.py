"""Plenum: lumped (0-D) gas networks — chambers, reservoirs, orifices, valves, pistons and
projectiles, walls — built from a model file, run and stepped from Python, and packaged as
FMI 2.0/3.0 FMUs (docs/python.md).

    import plenum
    model = plenum.Model.from_file("tanks.toml").set("a.pressure", "6 bar")
    result = model.run()                  # result.time, result["a.p"]: NumPy arrays
    sim = model.simulation()              # sim.advance(t), sim["a.p"], sim.state()
    model.build_fmu("tanks.fmu")          # linux64 + win64, FMI 2.0 (fmi_version=3: 3.0)

The ``plenum`` command (``plenum run | check | describe``) comes with the package.
"""

from plenum._errors import CheckFailed, ModelError, PlenumError, SolverError, StateError
from plenum._plenum import Diagnostic, Model, Simulation, Variable, __version__
from plenum._result import Result

__all__ = [
    "CheckFailed",
    "Diagnostic",
    "Model",
    "ModelError",
    "PlenumError",
    "Result",
    "Simulation",
    "SolverError",
    "StateError",
    "Variable",
    "__version__",
]
