"""Plenum against Cantera's ReactorNet (docs/verification.md; Cantera's "How Does
Cantera's Reactor Network Time Integration Feature Work?").

Each model file compliance-tests/peers/models/cantera_*.toml is run twice in this test:
by Plenum through its CLI (`plenum run <model> --csv`, rk4 at the file's step, and every
adaptive method the build knows at rtol 1e-12), and by Cantera 3.2, whose network is built here
from the same file:

  [gas] R, cp      one species of a YAML phase written here (`thermo: ideal-gas`, species
                   `thermo: {model: constant-cp}`), molar mass W = R_u/R through a custom element
                   of that atomic weight, cp0 = cp·W, and h0 = cp0·T0 at T0, so that h = cp·T and
                   u = cv·T exactly as Plenum's (then U agrees too, not only p, T, m, V)
  [[chamber]]      IdealGasReactor (state m, V, T), chemistry off
  [[reservoir]]    Reservoir (constant pressure and temperature only)
  [[valve]]        Valve with valve_coeff = K (opening as time_function when it is a table).
                   Cantera's Valve is one-way (mdot = K·max(p_up − p_down, 0): "it is never
                   possible for the flow to reverse"), so only `one_way = true` valves qualify
  [[wall]]         Wall(A, K = expansion_coefficient, U = heat_transfer_coefficient,
                   velocity = constant or Tabulated1)

Cantera's ReactorNet (CVODES BDF) runs at rtol 1e-12, atol 1e-20 and is advanced to every
output time of Plenum's CSV (and to every table breakpoint, where it is reinitialized, as Plenum
restarts there). Asserted: every chamber's p, T, m, V and U agree to 1e-7 relative at every output
time; the worst relative difference per variable is printed (`pytest -rP` shows it).
"""

import math

import cantera as ct
import pytest

from plenum_cli import MODELS, UnknownMethod, load_model, run_csv

REL_TOL = 1e-7
CANTERA_RTOL = 1e-12
CANTERA_ATOL = 1e-20
CASES = sorted(p.stem for p in MODELS.glob("cantera_*.toml"))
# (method, extra --set overrides); adaptive methods are skipped while this build lacks them.
METHODS = [
    ("rk4", []),
    ("dopri5", ["solver.rtol=1e-12", "solver.atol=1e-15"]),
    ("bdf", ["solver.rtol=1e-12", "solver.atol=1e-15"]),
]
VARIABLES = ["p", "T", "m", "V", "U"]


def test_cases_present():
    assert set(CASES) >= {
        "cantera_vent",
        "cantera_two_tanks",
        "cantera_wall",
        "cantera_piston",
    }, CASES


# ---------------------------------------------------------------------------------------------
# The Cantera side, built from the Plenum model file


def phase_yaml(r_j_per_kg_k, cp_j_per_kg_k, t0=300.0):
    w = ct.gas_constant / r_j_per_kg_k  # kg/kmol
    cp0 = cp_j_per_kg_k * w  # J/(kmol·K)
    return f"""
units: {{length: m, quantity: kmol, energy: J}}
elements:
- symbol: Pl
  atomic-weight: {w!r}
phases:
- name: gas
  thermo: ideal-gas
  elements: [Pl]
  species: [PL]
  kinetics: none
  state: {{T: 300.0, P: 1.0e5}}
species:
- name: PL
  composition: {{Pl: 1}}
  thermo:
    model: constant-cp
    T0: {t0!r}
    h0: {cp0 * t0!r}
    s0: 0.0
    cp0: {cp0!r}
"""


def param_function(value):
    """A model-file parameter as a Cantera function of time (a number, or a table)."""
    if isinstance(value, dict):
        times = [row[0] for row in value["table"]]
        values = [row[1] for row in value["table"]]
        method = {"linear": "linear", "step": "previous"}[value.get("interpolation", "linear")]
        return ct.Tabulated1(times, values, method=method), times
    return float(value), []


class CanteraNetwork:
    def __init__(self, spec):
        gas = spec["gas"]
        self.yaml = phase_yaml(gas["R"], gas["cp"])
        self.nodes = {}
        self.chambers = {}
        self.breakpoints = set()
        self._keep = []  # functions must outlive the network
        for c in spec.get("chamber", []):
            r = ct.IdealGasReactor(
                self.solution(c["temperature"], c["pressure"]),
                volume=c["volume"],
                name=c["name"],
                clone=False,
            )
            r.chemistry_enabled = False
            self.nodes[c["name"]] = r
            self.chambers[c["name"]] = r
        for res in spec.get("reservoir", []):
            p, t = res["pressure"], res["temperature"]
            assert not isinstance(p, dict) and not isinstance(t, dict), (
                "Cantera reservoirs here are constant"
            )
            self.nodes[res["name"]] = ct.Reservoir(
                self.solution(t, p), name=res["name"], clone=False
            )
        for v in spec.get("valve", []):
            assert v.get("one_way", False), (
                f"valve {v['name']}: Cantera's Valve is one-way; set one_way = true"
            )
            valve = ct.Valve(self.nodes[v["from"]], self.nodes[v["to"]], name=v["name"])
            valve.valve_coeff = v["coefficient"]
            opening, times = param_function(v.get("opening", 1.0))
            if isinstance(opening, float):
                valve.valve_coeff = v["coefficient"] * opening
            else:
                valve.time_function = opening
            self.breakpoints.update(times)
            self._keep += [valve, opening]
        for w in spec.get("wall", []):
            wall = ct.Wall(
                self.nodes[w["left"]],
                self.nodes[w["right"]],
                name=w["name"],
                A=w["area"],
                K=w.get("expansion_coefficient", 0.0),
                U=w.get("heat_transfer_coefficient", 0.0),
            )
            velocity, times = param_function(w.get("velocity", 0.0))
            wall.velocity = velocity
            self.breakpoints.update(times)
            self._keep += [wall, velocity]
        self.net = ct.ReactorNet(list(self.chambers.values()))
        self.net.rtol = CANTERA_RTOL
        self.net.atol = CANTERA_ATOL
        self.net.max_steps = 10**7

    def solution(self, t, p):
        s = ct.Solution(yaml=self.yaml)
        s.TP = t, p
        return s

    def values(self):
        out = {}
        for name, r in self.chambers.items():
            ph = r.phase
            out[f"{name}.p"] = ph.P
            out[f"{name}.T"] = r.T
            out[f"{name}.m"] = r.mass
            out[f"{name}.V"] = r.volume
            out[f"{name}.U"] = r.mass * ph.int_energy_mass
        return out

    def run(self, times):
        """Values at each of `times` (the first is the initial time)."""
        rows = [self.values()]
        pending = sorted(b for b in self.breakpoints if times[0] < b < times[-1])
        for t in times[1:]:
            while pending and pending[0] <= t:
                b = pending.pop(0)
                self.net.advance(b)
                self.net.reinitialize()
            self.net.advance(t)
            rows.append(self.values())
        return {k: [row[k] for row in rows] for k in rows[0]}


# ---------------------------------------------------------------------------------------------


def check_gas_matches(spec):
    """Cantera's phase has Plenum's R, cp, γ = 1.4 and u = cv·T."""
    g = spec["gas"]
    s = ct.Solution(yaml=phase_yaml(g["R"], g["cp"]))
    s.TP = 412.5, 3e5
    r_ct = ct.gas_constant / s.mean_molecular_weight
    cv = g["cp"] - g["R"]
    assert math.isclose(r_ct, g["R"], rel_tol=1e-14)
    assert math.isclose(s.cp_mass, g["cp"], rel_tol=1e-14)
    assert math.isclose(s.cp_mass / s.cv_mass, 1.4, rel_tol=1e-12)
    assert math.isclose(s.int_energy_mass, cv * 412.5, rel_tol=1e-13)


@pytest.mark.parametrize("method,sets", METHODS, ids=[m for m, _ in METHODS])
@pytest.mark.parametrize("case", CASES)
def test_cantera_agreement(case, method, sets, tmp_path):
    model = MODELS / f"{case}.toml"
    spec = load_model(model)
    check_gas_matches(spec)
    try:
        plenum, cmd = run_csv(model, tmp_path / "plenum.csv", method=method, sets=sets)
    except UnknownMethod as e:
        pytest.skip(f"this build has no `{method}` yet ({e})")
    times = plenum["time"]
    cantera = CanteraNetwork(spec).run(times)

    print(f"\n{case} [{method}]: {cmd}")
    print(f"  {len(times)} output times, 0 .. {times[-1]} s; Cantera rtol {CANTERA_RTOL}")
    print(f"  {'variable':<14} {'worst rel diff':>14}  at t (s)   plenum / cantera there")
    failures = []
    for name in sorted(cantera):
        a, b = plenum[name], cantera[name]
        assert len(a) == len(b)
        rel = [abs(x - y) / abs(y) for x, y in zip(a, b)]
        k = max(range(len(rel)), key=rel.__getitem__)
        print(f"  {name:<14} {rel[k]:14.3e}  {times[k]:<9.4g} {a[k]!r} / {b[k]!r}")
        if not rel[k] <= REL_TOL:
            failures.append(f"{name}: {rel[k]:.3e} at t = {times[k]}")
    # The run moved every chamber far from its start (the comparison is not of constants).
    for name in cantera:
        if name.endswith(".p"):
            change = abs(cantera[name][-1] / cantera[name][0] - 1.0)
            print(f"  {name} changed by {change:.1%} over the run")
            assert change > 0.1
    assert not failures, f"{case} [{method}] differs from Cantera beyond {REL_TOL}: {failures}"
