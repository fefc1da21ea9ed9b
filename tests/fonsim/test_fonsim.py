"""FONSim agreement (docs/verification.md): FONSim, installed from PyPI (requirements.txt), runs
its own
models of three networks in this test run; Plenum runs the equivalent model files in models/.

Tolerance, and why: FONSim integrates with backward Euler at a fixed step h, a first-order
method, so its error at h is O(h) and is estimated, from FONSim alone, by Richardson's
FONSim(2h) − FONSim(h). Plenum solves the same equations with RK4, whose error at the same h is
negligible (asserted below against Plenum at h/100). Agreement "to the accuracy FONSim's method
allows" is then: |Plenum − FONSim| ≤ 1.25 × FONSim's own error estimate, at every 1 ms output,
and FONSim's error must shrink at order 1 (0.9–1.1) toward Plenum's reference solution; if the
equations differed, FONSim's error would level off instead of halving with h.

    pytest tests/fonsim/test_fonsim.py -s
"""

import pytest

import compare


@pytest.fixture(scope="module")
def results():
    return compare.main()


@pytest.mark.parametrize("case", [c[0] for c in compare.CASES])
def test_plenum_agrees_with_fonsim(results, case):
    r = next(x for x in results if x["name"] == case)
    print(
        f"\n{case}: Plenum vs FONSim {r['plenum_vs_fonsim']:.3e} of the pressure change "
        f"(limit 1.25 x {r['fonsim_own_error_estimate']:.3e}); FONSim vs reference "
        f"{r['fonsim_h']:.3e} at h, {r['fonsim_2h']:.3e} at 2h, order {r['order']:.3f}; "
        f"Plenum RK4 at h vs reference {r['plenum_h']:.3e} (limit 1e-9)"
    )
    assert r["plenum_h"] < 1e-9
    assert 0.9 < r["order"] < 1.1
    assert r["plenum_vs_fonsim"] <= 1.25 * r["fonsim_own_error_estimate"]
    # And FONSim at its finest step here is within 1e-3 of the pressure change.
    assert r["fonsim_h"] < 1e-3
