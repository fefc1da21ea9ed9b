"""The double-acting cylinder circuit (FRL, 5/2 valve, meter-out flow controls): the
co-simulation controller (controller.py, FMPy) switches the valve on the end positions; the
run is checked against the CLI run of the same model with the controller's switches as a step
table (a peer run) and against a hand calculation of each stroke (README.md). Run from the
workspace root after `cargo build --workspace`:

    PY=$(bash scripts/python-env.sh) && "$PY" -m pytest examples -q -rA
"""

import csv
import math
import os
import subprocess
import tomllib

from conftest import BIN, ROOT, build_fmu, load_module

HERE = ROOT / "examples" / "double_acting"
controller = load_module(HERE / "controller.py", "double_acting_controller")

# The hand calculation's data: the catalogue values of model.toml (checked against it below).
R, RHO0, T0, P_ATM = 287.05, 1.185, 293.15, 101325.0  # air; ISO 8778 reference atmosphere
T = T0  # isothermal gas at 20 °C
BORE, ROD, STROKE, DEAD = 32e-3, 12e-3, 0.1, 3e-6
CUSHION, NEEDLE, PORT = 15e-3, 0.25e-6, 1e-6  # cushion length, needle area, port volume
GAMMA = 1004.675 / (1004.675 - R)  # cp/cv of air: the needle's isentropic law, isothermal or not
CHOKED = (2 / (GAMMA + 1)) ** ((GAMMA + 1) / (2 * (GAMMA - 1)))
R_CRIT = (2 / (GAMMA + 1)) ** (GAMMA / (GAMMA - 1))  # the needle's critical pressure ratio
A = math.pi / 4 * BORE**2
A_ROD = math.pi / 4 * ROD**2
A_ANN = A - A_ROD
F_DYN = 0.2e5 * A  # dynamic friction, N
P_SET = P_ATM + 6e5  # regulator set point, absolute
P_SUPPLY = 9.01325e5
B = 0.3  # every flow path's critical pressure ratio
C_THROTTLE = 0.3e-8 * 0.5  # m³/(s·Pa): the needle's rating times its opening
C_CHECK = 1.5e-8
CHECK_CRACK, CHECK_FULL = 0.1e5, 0.3e5
REG_RANGE = 0.5e5


def c_from_nominal(q_n_l_per_min):
    """ISO 6358-1: C from the nominal flow (6 bar gauge inlet, 1 bar drop) and b."""
    p1, p2 = 7e5, 6e5
    return q_n_l_per_min * 1e-3 / 60 / (p1 * math.sqrt(1 - ((p2 / p1 - B) / (1 - B)) ** 2))


C_REG, C_VALVE = c_from_nominal(1500.0), c_from_nominal(800.0)


def iso(c, p1, p2):
    """ISO 6358 mass flow from p1 to p2 (p1 ≥ p2) at the reference temperature."""
    r = p2 / p1
    if r <= B:
        return c * p1 * RHO0
    if r <= 0.999:
        return c * p1 * RHO0 * math.sqrt(1 - ((r - B) / (1 - B)) ** 2)
    k1 = c * RHO0 / (1 - 0.999) * math.sqrt(1 - ((0.999 - B) / (1 - B)) ** 2)
    return k1 * p1 * (1 - r)


def solve(f, lo, hi):
    """The root of the monotonic f in [lo, hi], by bisection."""
    flo = f(lo)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if (f(mid) > 0) == (flo > 0):
            lo, flo = mid, f(mid)
        else:
            hi = mid
    return 0.5 * (lo + hi)


def supply_pressure_at(mdot):
    """The pressure a chamber fills to at mass flow `mdot`: the regulator's droop, the valve's
    drop (p → a or p → b) and the flow control's check valve, in series (hoses neglected)."""
    p_reg = solve(lambda p: min(max((P_SET - p) / REG_RANGE, 0), 1) * iso(C_REG, P_SUPPLY, p) - mdot,
                  P_SET - REG_RANGE, P_SET)
    p_valve = solve(lambda p: iso(C_VALVE, p_reg, p) - mdot, 0.5 * p_reg, p_reg)

    def check(p):
        x = min(max((p_valve - p - CHECK_CRACK) / (CHECK_FULL - CHECK_CRACK), 0), 1)
        return x * iso(C_CHECK, p_valve, p) - mdot

    return solve(check, 0.5 * p_valve, p_valve - CHECK_CRACK)


def stroke_hand(extend):
    """One stroke by hand (README.md): speed v outside the cushion, speed v_c inside it, the
    time to the stop, the filling and exhausting chambers' pressures. Outside the cushion the
    flow control's throttle chokes, so the exhausting chamber (area A_x) empties at
    ṁ = C·ρ0·p and the piston moves at v = C·ρ0·R·T/A_x; the force balance gives that
    chamber's pressure p_x from the filling one's. Within the cushion length l_c of the stop
    the bore's gas leaves through the needle alone, an isentropic orifice (C_d = 1, area A_n)
    choked at the same p_x: v_c = A_n·√(γ·R·T)·(2/(γ+1))^((γ+1)/(2(γ−1)))/A_x. The stroke is
    the exhausting side's gas balance in two phases: from p0·V0 at the switch down to
    p_x·V_entry at the cushion's edge (V_entry = dead + port + A_x·l_c) at C·ρ0·p_x, then l_c
    at v_c."""
    a_fill, a_out = (A, A_ANN) if extend else (A_ANN, A)
    v = C_THROTTLE * RHO0 * R * T / a_out
    v_c = NEEDLE * math.sqrt(GAMMA * R * T) * CHOKED / a_out
    p_fill = solve(lambda p: supply_pressure_at(p * a_fill * v / (R * T)) - p, P_ATM, P_SET)
    # p_cap·A − p_rod·A_ann − p_atm·A_rod ∓ F = 0, friction against the motion.
    if extend:
        p_out = (p_fill * A - P_ATM * A_ROD - F_DYN) / A_ANN
    else:
        p_out = (p_fill * A_ANN + P_ATM * A_ROD - F_DYN) / A
    # Choked: the exhaust path downstream (the valve to the atmosphere) is below b·p_out.
    mdot = C_THROTTLE * RHO0 * p_out
    p_down = solve(lambda p: iso(C_VALVE, p, P_ATM) - mdot, P_ATM, p_out)
    assert p_down / p_out < B, (p_down, p_out)
    v0 = DEAD + PORT + a_out * STROKE
    v_entry = DEAD + PORT + a_out * CUSHION
    t = (P_SET * v0 / p_out - v_entry) / (C_THROTTLE * RHO0 * R * T) + CUSHION / v_c
    return v, v_c, t, p_fill, p_out


# Two adaptive runs of the circuit at rtol 1e-9 (the FMU stepping between communication points,
# the CLI between breakpoints) start each in-stroke a few 1e-8 s apart, where the piston leaves
# the rod-end stop inside its cushion: instants that carry each run's global error (README.md,
# "Peer runs"). The
# difference converges with the tolerance (5.9e-8 s at rtol 1e-9, 2.2e-9 s at 1e-10, under
# 1e-9 s at 1e-11) and then stays through the stroke; where a pressure moves fast, such as the
# 1 cm³ port falling once the cushion closes it (5.3e7 Pa/s), it shows as a difference of
# value. The peers are compared allowing their strokes this shift, SHIFT_S, and measure it.
SHIFT_S = 1e-7
MID = 0.05  # m: the stroke's middle, where each stroke's shift is measured


def crossings(t, x, level):
    """The times x(t) crosses `level` (rows interpolated linearly)."""
    return [t[i - 1] + (level - x[i - 1]) / (x[i] - x[i - 1]) * (t[i] - t[i - 1])
            for i in range(1, len(x)) if (x[i - 1] - level) * (x[i] - level) < 0]


def stroke_shift(t, x_a, x_b):
    """The largest difference of two runs' times through the stroke's middle."""
    a, b = crossings(t, x_a, MID), crossings(t, x_b, MID)
    assert len(a) == len(b) >= 4, (a, b)
    return max(abs(u - v) for u, v in zip(a, b))


def shifted_error(t, a, b, shift=SHIFT_S):
    """|a − b| / max|b| at each row less what b moves in `shift` seconds there (its steeper
    neighbouring secant): the two runs' difference of value beyond their difference of time."""
    scale = max(abs(v) for v in b)
    err = []
    for i in range(len(t)):
        slopes = [abs(b[j] - b[j - 1]) / (t[j] - t[j - 1]) for j in (i, i + 1) if 0 < j < len(t)]
        err.append(max(abs(a[i] - b[i]) - shift * max(slopes), 0.0) / scale)
    return err


def cli(text, tmp_path):
    model = tmp_path / "schedule.toml"
    model.write_text(text)
    out = tmp_path / "cli.csv"
    plenum = os.environ.get("PLENUM_BIN", str(BIN / "plenum"))
    subprocess.run([plenum, "run", str(model), "--csv", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def test_model_holds_the_hand_calculations_values():
    with open(HERE / "model.toml", "rb") as f:
        m = tomllib.load(f)
    cyl, fc, reg, valve = m["cylinder"][0], m["flow_control"], m["regulator"][0], m["directional_valve"][0]
    assert (cyl["bore"], cyl["rod_diameter"], cyl["stroke"]) == ("32 mm", "12 mm", "100 mm")
    assert cyl["dead_volume"] == cyl["rod_dead_volume"] == "3 cm^3"
    assert (cyl["cushion_length"], cyl["cushion_needle_area"], cyl["port_volume"]) == (
        "15 mm", "0.25 mm^2", "1 cm^3")
    assert "rod_cushion_needle_area" not in cyl and "rod_port_volume" not in cyl
    assert cyl["friction_dynamic"] == "0.2 bar" and m["gas"]["isothermal"]
    for f in fc:
        assert (f["sonic_conductance"], f["opening"], f["check_sonic_conductance"]) == (
            "0.3 dm^3/(s*bar)", 0.5, "1.5 dm^3/(s*bar)")
        assert (f["cracking_pressure"], f["full_flow_pressure"]) == ("0.1 bar", "0.3 bar")
    assert (reg["set_pressure"], reg["regulation_range"], reg["nominal_flow"]) == (
        "6 bar", "0.5 bar", "1500 Nl/min")
    assert valve["nominal_flow"] == "800 Nl/min"
    assert all(x["critical_pressure_ratio"] == B for x in (*fc, reg, valve))


def test_controller_cycles_the_cylinder_as_the_cli_does_and_as_the_hand_calculation(fmu_dir, tmp_path):
    text = (HERE / "model.toml").read_text()
    toml = tmp_path / "double_acting.toml"
    toml.write_text(controller.fmu_model(text))
    fmu = build_fmu(toml, fmu_dir)
    names, rows, switches = controller.run(str(fmu))
    col = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    t = col["time"]
    print(f"{len(switches) - 1} switches at " + ", ".join(f"{s[0]:.3f}" for s in switches[1:]))
    # Two full cycles, each stroke ended by the controller on its reed switch.
    assert len(switches) >= 5
    assert [s[1] for s in switches[1:5]] == [1.0, 0.0, 1.0, 0.0]

    # Peer run: the CLI with the same switches as a step table, at every output time and at
    # the final time.
    ref = cli(controller.schedule_model(text, switches), tmp_path)
    assert len(ref["time"]) == len(t) and max(abs(a - b) for a, b in zip(ref["time"], t)) < 1e-12
    shift = stroke_shift(t, col["cyl.x"], ref["cyl.x"])
    print(f"strokes through the middle: FMU and CLI at most {shift:.1e} s apart "
          f"(allowed {SHIFT_S:g} s)")
    assert shift <= SHIFT_S
    worst = {}
    for name in ("cyl_cap_bore.p", "cyl_rod_bore.p", "cyl_cap.p", "cyl_rod.p", "frl_out.p",
                 "valve_a.p", "line_b_1.p", "cyl.x", "cyl_cap_bore.m", "cyl.v", "fc_a.mdot",
                 "fc_b.mdot", "valve.a_mdot", "frl.mdot"):
        scale = max(abs(v) for v in ref[name])
        plain = [abs(a - b) / scale for a, b in zip(col[name], ref[name])]
        err = shifted_error(t, col[name], ref[name])
        i_p = max(range(len(t)), key=plain.__getitem__)
        i_w = max(range(len(t)), key=err.__getitem__)
        print(f"{name}: worst |FMU - CLI| / max|CLI| = {plain[i_p]:.2e} at {t[i_p]:.3f} s, "
              f"beyond the shift {err[i_w]:.2e} at {t[i_w]:.3f} s (final time {plain[-1]:.2e})")
        kind = "flow" if name.endswith(("mdot", ".v")) else "state"
        worst[kind] = max(worst.get(kind, 0.0), err[i_w])
    print(f"worst beyond the shift: states {worst['state']:.2e}, flows and speed "
          f"{worst['flow']:.2e}")
    # Both are adaptive solutions at rtol 1e-9 that restart at a switch each in its own way
    # (an input set at a communication point, a table's breakpoint): equal to the tolerance,
    # not to the bit. The states within 100·rtol beyond the strokes' shift. A flow control's
    # check valve opens linearly over 0.2 bar and fills the cylinder 0.05–0.09 bar past its
    # cracking pressure, so its flow magnifies an error in the pressures by
    # p/(Δp − Δp_c) ≈ 100: the flows (and the speed, which follows them) within 1e4·rtol.
    assert worst["state"] <= 1e-7
    assert worst["flow"] <= 1e-5

    # Each stroke against the hand calculation: the time from the switch to the stop; the mean
    # speed over the stroke's middle outside the cushions (40 mm to 80 mm, or back), where the
    # start's oscillation of the load on the air springs has died down; the speed inside the
    # cushion, the least-squares slope of x(t) from 3 mm into it to 2 mm before the stop (the
    # load rocks on the cushion's gas spring there, README.md); and that the needle chokes in
    # that window (its port below the critical ratio of the bore's pressure).
    x = col["cyl.x"]
    for k, (t_switch, s) in enumerate(switches[1:5]):
        extend = s == 1.0
        sign = 1 if extend else -1
        v_hand, v_c_hand, t_hand, p_fill, p_out = stroke_hand(extend)
        i0 = next(i for i, ti in enumerate(t) if ti > t_switch + 1e-9)
        stop = STROKE if extend else 0.0
        i_end = next(i for i in range(i0, len(t)) if x[i] == stop)

        def crossing(level):
            i = next(i for i in range(i0, i_end + 1) if (x[i] - level) * sign >= 0)
            return t[i - 1] + (level - x[i - 1]) / (x[i] - x[i - 1]) * (t[i] - t[i - 1])

        lo, hi = (0.04, 0.08) if extend else (0.06, 0.02)
        v_sim = abs(hi - lo) / (crossing(hi) - crossing(lo))
        t_sim = t[i_end] - t_switch
        i_mid = next(i for i in range(i0, i_end) if abs(x[i] - 0.05) < 0.005)
        bore_out, bore_fill = ("cyl_rod_bore.p", "cyl_cap_bore.p")[::sign]
        port_out = "cyl_rod.p" if extend else "cyl_cap.p"
        p_out_sim, p_fill_sim = col[bore_out][i_mid], col[bore_fill][i_mid]
        t_a, t_b = crossing(stop - sign * (CUSHION - 3e-3)), crossing(stop - sign * 2e-3)
        zone = [i for i in range(i0, i_end) if t_a <= t[i] <= t_b]
        t_m = sum(t[i] for i in zone) / len(zone)
        x_m = sum(x[i] for i in zone) / len(zone)
        v_c_sim = abs(sum((t[i] - t_m) * (x[i] - x_m) for i in zone)
                      / sum((t[i] - t_m) ** 2 for i in zone))
        ratio = max(col[port_out][i] / col[bore_out][i] for i in zone)
        print(f"stroke {k + 1} ({'out' if extend else 'in'}): speed {v_sim:.4f} m/s, hand "
              f"{v_hand:.4f} ({v_sim / v_hand - 1:+.2%}); cushioned {v_c_sim:.4f} m/s, hand "
              f"{v_c_hand:.4f} ({v_c_sim / v_c_hand - 1:+.2%}), port/bore at most {ratio:.3f} "
              f"(choked below {R_CRIT:.3f}); time {t_sim:.4f} s, hand {t_hand:.4f} "
              f"({t_sim / t_hand - 1:+.2%}); filling chamber {p_fill_sim / 1e5:.3f} bar, hand "
              f"{p_fill / 1e5:.3f}; exhausting {p_out_sim / 1e5:.3f} bar, hand {p_out / 1e5:.3f}")
        assert abs(v_sim / v_hand - 1) <= 0.01
        assert abs(v_c_sim / v_c_hand - 1) <= 0.03
        assert ratio < R_CRIT
        assert abs(t_sim / t_hand - 1) <= 0.02

    # The cycle the controller runs: each stroke until its reed switch (SENSOR before the stop,
    # inside the cushion), then DWELL; the controller sees the switch at its next 1 ms
    # communication point.
    (_, v_c_out, t_out, *_), (_, v_c_in, t_in, *_) = stroke_hand(True), stroke_hand(False)
    cycle_hand = (t_out - controller.SENSOR / v_c_out) + (t_in - controller.SENSOR / v_c_in) \
        + 2 * controller.DWELL
    cycle = switches[3][0] - switches[1][0]
    print(f"cycle {cycle:.4f} s, hand {cycle_hand:.4f} s ({cycle / cycle_hand - 1:+.2%})")
    assert abs(cycle / cycle_hand - 1) <= 0.01


def test_the_schedule_runs_two_cycles_under_every_method_auto_uses(tmp_path):
    """The model file as shipped (the spool on its schedule) under `auto` and the two methods
    it switches between: each runs to the end (no step-size failure) and completes two full
    strokes out and back; the three agree at every output time to the tolerance."""
    runs = {}
    for method in ("auto", "dopri5", "bdf"):
        text = (HERE / "model.toml").read_text().replace(
            'method = "auto"', f'method = "{method}"', 1)
        runs[method] = cli(text, tmp_path)
        x = runs[method]["cyl.x"]
        # Strokes: the stop reached, out or in, counted at each arrival.
        arrivals = [x[i] for i in range(1, len(x)) if x[i] in (0.0, STROKE) and x[i] != x[i - 1]]
        print(f"{method}: arrivals at the stops {arrivals}, final rc {runs[method]['rc'][-1]:g}")
        assert arrivals == [STROKE, 0.0, STROKE, 0.0]
        assert runs[method]["rc"][-1] == 0.0
    t = runs["auto"]["time"]
    for method in ("dopri5", "bdf"):
        shift = stroke_shift(t, runs[method]["cyl.x"], runs["auto"]["cyl.x"])
        print(f"{method} against auto: strokes through the middle at most {shift:.1e} s apart "
              f"(allowed {SHIFT_S:g} s)")
        assert shift <= SHIFT_S
        for name in ("cyl_cap_bore.p", "cyl_rod_bore.p", "cyl_cap.p", "cyl_rod.p", "cyl.x",
                     "cyl_cap_bore.m"):
            ref = runs["auto"][name]
            scale = max(abs(v) for v in ref)
            plain = max(abs(a - b) for a, b in zip(runs[method][name], ref)) / scale
            err = max(shifted_error(t, runs[method][name], ref))
            print(f"{method} against auto, {name}: worst {plain:.2e} of its range, beyond the "
                  f"shift {err:.2e}")
            # Different methods at rtol 1e-9: each holds its local error to the tolerance, and
            # their global errors, accumulated over thousands of steps, differ by a multiple of
            # it.
            assert err <= 1e-6
