//! Tests of the BDF's steps: constant states and quadratures left out, the fixed-order
//! variants' start, restored histories, the direct solves against a dense LU.

use crate::integrators::linsolve::Solver;
use crate::integrators::linsolve::small::SMALL_MAX;

/// `set_weights`: 1/(rtol·|z_0,i| + atol) for every state and 0 for the quadratures when the
/// adaptive method keeps them out of its norms (the fixed-order variants weigh them with
/// their own tolerances), bit for bit, on both of its paths (≤ `SMALL_MAX` states: one
/// pass with a branch; above: every weight, then the quadratures' set to 0).
#[test]
fn error_weights_leave_out_the_quadratures() {
    use super::step::{FIXED_ATOL, FIXED_RTOL};
    use super::{Bdf, Pattern, Tolerances};
    use crate::ode::OdeSystem;
    struct Quad(usize);
    impl OdeSystem for Quad {
        fn dimension(&self) -> usize {
            self.0
        }
        fn rhs(&mut self, _t: f64, _y: &[f64], dy: &mut [f64]) {
            dy.fill(0.0);
        }
        fn sparsity(&self) -> Option<Pattern> {
            // The last two read the first; nothing reads them.
            let n = self.0;
            let mut e: Vec<(usize, usize)> = (0..n - 2).map(|i| (i, i)).collect();
            e.extend([(0, n - 2), (0, n - 1)]);
            Some(Pattern::from_entries(n, e))
        }
        fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
            [self.0 - 2..self.0 - 1, self.0 - 1..self.0]
        }
    }
    for n in [6, SMALL_MAX + 11] {
        for fixed in [None, Some(2)] {
            let sys = Quad(n);
            let mut bdf = match fixed {
                None => Bdf::adaptive(n),
                Some(k) => Bdf::fixed(k, n),
            };
            bdf.tolerances = Tolerances {
                rtol: 3e-7,
                atol: 1e-9,
                ..Tolerances::default()
            };
            bdf.prepare(&sys).expect("prepared");
            let mut sys = sys;
            let mut st = bdf.stepper(&mut sys);
            for (i, z) in st.s.zn[..n].iter_mut().enumerate() {
                *z = (i as f64 - 3.5) * 1.7e3;
            }
            st.set_weights();
            let (rtol, atol) = match fixed {
                None => (3e-7, 1e-9),
                Some(_) => (FIXED_RTOL, FIXED_ATOL.max(1e-9f64.min(1e-14))),
            };
            for i in 0..n {
                let expect = if i >= n - 2 && fixed.is_none() {
                    0.0
                } else {
                    1.0 / (rtol * st.s.zn[i].abs() + atol)
                };
                assert_eq!(
                    st.ws.ewt[i].to_bits(),
                    expect.to_bits(),
                    "n {n}, {fixed:?}, {i}"
                );
            }
        }
    }
}

/// The Newton iteration fused with the split (`Workspace::fused`: the residual of the
/// coupled states written into the LU's right-hand side, the update reading their solution
/// there) steps a chain of chambers' layout (per group a, b coupled to the neighbours' a, c
/// constant; two quadratures reading the last group) to the same bits as the unfused live
/// passes, and as the passes over every state without the declaration; and it is taken.
#[test]
fn fused_newton_steps_as_the_unfused() {
    use super::{Bdf, Tolerances};
    use crate::integrators::Integrator;
    use crate::ode::{BlockLayout, OdeSystem};
    use crate::sparsity::Pattern;
    const K: usize = 8;
    const N: usize = 3 * K + 2;
    struct Chain {
        declared: bool,
    }
    impl OdeSystem for Chain {
        const BLOCKS: Option<BlockLayout> = Some(BlockLayout { size: 3, live: 2 });
        fn dimension(&self) -> usize {
            N
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            for k in 0..K {
                let up = if k == 0 { 1.0 } else { y[3 * (k - 1)] };
                let down = if k + 1 == K { 0.0 } else { y[3 * (k + 1)] };
                let (a, b, c) = (y[3 * k], y[3 * k + 1], y[3 * k + 2]);
                dy[3 * k] = c * (up - a) - c * (a - down) + 0.5 * b * b;
                dy[3 * k + 1] = c * (a - b) - b;
                dy[3 * k + 2] = 0.0;
            }
            dy[3 * K] = y[3 * (K - 1)];
            dy[3 * K + 1] = y[3 * (K - 1) + 1];
        }
        fn sparsity(&self) -> Option<Pattern> {
            let mut e = Vec::new();
            for k in 0..K {
                let (a, b, c) = (3 * k, 3 * k + 1, 3 * k + 2);
                e.extend([(a, a), (b, a), (c, a), (a, b), (b, b), (c, b)]);
                if k > 0 {
                    e.push((a - 3, a));
                }
                if k + 1 < K {
                    e.push((a + 3, a));
                }
            }
            e.extend([(3 * K - 3, 3 * K), (3 * K - 2, 3 * K + 1)]);
            Some(Pattern::from_entries(N, e))
        }
        fn constant_states(&self) -> Vec<usize> {
            if self.declared {
                (0..K).map(|k| 3 * k + 2).collect()
            } else {
                Vec::new()
            }
        }
        fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
            [3 * K..3 * K + 1, 3 * K + 1..3 * K + 2]
        }
    }
    let y0: Vec<f64> = (0..K)
        .flat_map(|k| [0.0, 0.1, 20.0 * (1.0 + k as f64)])
        .chain([0.0, 0.0])
        .collect();
    let run = |declared: bool, fuse: bool| {
        let mut sys = Chain { declared };
        let mut b = Bdf::adaptive(N);
        b.tolerances = Tolerances {
            rtol: 1e-7,
            atol: 1e-10,
            ..Tolerances::default()
        };
        b.prepare(&sys).expect("prepared");
        let fused = b.ws.fused;
        b.ws.fused &= fuse;
        let (mut t, mut y, mut inc) = (0.0, y0.clone(), vec![0.0; N]);
        while t < 1.0 {
            let h = b.attempt(&mut sys, t, &y, 1.0 - t, &mut inc).expect("step");
            for (a, d) in y.iter_mut().zip(&inc) {
                *a += d;
            }
            t += h;
            b.commit(&mut sys, t, &y);
        }
        assert_eq!(b.ws.fused, fused && fuse, "the workspace was rebuilt");
        (y, fused, b.stats.steps, b.stats.newton_iterations)
    };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let (yf, fused, steps, its) = run(true, true);
    assert!(fused, "the chain's layout is fused");
    let (yl, ..) = run(true, false);
    let (ya, fused_all, ..) = run(false, true);
    assert!(!fused_all);
    println!("fused: {steps} steps, {its} Newton iterations; y {yf:?}");
    assert_eq!(bits(&yf), bits(&yl), "fused against the live passes");
    assert_eq!(bits(&yf), bits(&ya), "fused against every state");
    assert!(yf[3 * K] > 0.0 && yf[1] != y0[1], "the chain moved");
}

/// Constant states (`OdeSystem::constant_states`) left out of the direct solve give the
/// same bits as the same system without the declaration: six
/// uncoupled decays a_j' = −c_j·a_j with b_j' = c_j·a_j, the rates c_j = 10^j (j = 0..5) held
/// as states with c_j' = 0 (their rows of J empty, their columns not: a fixed volume's
/// kind), adaptive and bdf3 with its RK4 start, from a_j = 1, b_j = 0 to t = 2. Truth
/// besides the twin: a_j = e^(−c_j·t), b_j = 1 − a_j. A restored history whose constant
/// states' higher Nordsieck columns are not 0 is stepped over every state, as the twin.
#[test]
fn constant_states_are_skipped_exactly() {
    use super::{Bdf, Tolerances};
    use crate::integrators::Integrator;
    use crate::ode::OdeSystem;
    use crate::sparsity::Pattern;
    const K: usize = 6;
    struct Rates {
        declared: bool,
    }
    impl OdeSystem for Rates {
        fn dimension(&self) -> usize {
            3 * K
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            for j in 0..K {
                let (a, c) = (y[3 * j], y[3 * j + 2]);
                dy[3 * j] = -c * a;
                dy[3 * j + 1] = c * a;
                dy[3 * j + 2] = 0.0;
            }
        }
        fn sparsity(&self) -> Option<Pattern> {
            let mut entries = Vec::new();
            for j in 0..K {
                for col in [3 * j, 3 * j + 2] {
                    entries.push((col, 3 * j));
                    entries.push((col, 3 * j + 1));
                }
            }
            Some(Pattern::from_entries(3 * K, entries))
        }
        fn constant_states(&self) -> Vec<usize> {
            if self.declared {
                (0..K).map(|j| 3 * j + 2).collect()
            } else {
                Vec::new()
            }
        }
    }
    let n = 3 * K;
    let y0: Vec<f64> = (0..K)
        .flat_map(|j| [1.0, 0.0, 10f64.powi(j as i32)])
        .collect();
    // (final y, steps, Newton iterations, constants left out, Nordsieck array) of a run; `spoil`: restore, after 5 steps, a copy
    // whose constant state 2 has z_1 ≠ 0.
    let run = |declared: bool, fixed: bool, spoil: bool| {
        let mut sys = Rates { declared };
        let mut b = if fixed {
            Bdf::fixed(3, n)
        } else {
            Bdf::adaptive(n)
        };
        b.tolerances = Tolerances {
            rtol: 1e-8,
            atol: 1e-12,
            ..Tolerances::default()
        };
        let (mut t, mut y, mut inc) = (0.0, y0.clone(), vec![0.0; n]);
        let mut steps = 0;
        while t < 2.0 {
            let h_max = if fixed {
                1e-4_f64.min(2.0 - t)
            } else {
                2.0 - t
            };
            let h = b.attempt(&mut sys, t, &y, h_max, &mut inc).expect("step");
            for (a, d) in y.iter_mut().zip(&inc) {
                *a += d;
            }
            t += h;
            b.commit(&mut sys, t, &y);
            steps += 1;
            if spoil && steps == 5 {
                let mut c = b.clone();
                c.hist.zn[n + 2] = 1e-3;
                b.assign(&c);
            }
        }
        if spoil && declared {
            assert!(
                b.const_refused,
                "the spoiled history was stepped with the skip"
            );
        }
        (
            y,
            steps,
            b.stats.newton_iterations,
            !b.ws.constant.is_empty(),
            b.hist.zn.clone(),
        )
    };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (fixed, spoil) in [(false, false), (true, false), (false, true)] {
        let (ya, sa, na, skipped, za) = run(true, fixed, spoil);
        let (yb, sb, nb, _, zb) = run(false, fixed, spoil);
        println!(
            "fixed {fixed}, spoiled {spoil}: {sa} steps, {na} Newton iterations, left out \
             {skipped}; twin {sb}, {nb}"
        );
        assert_eq!(skipped, !spoil, "the constant states are left out");
        assert_eq!((sa, na), (sb, nb));
        assert_eq!(bits(&ya), bits(&yb), "fixed {fixed}, spoiled {spoil}");
        // The saved history too, to the sign of its zeros.
        assert_eq!(
            bits(&za),
            bits(&zb),
            "history, fixed {fixed}, spoiled {spoil}"
        );
        if spoil {
            continue;
        }
        for j in 0..K {
            let a = (-(10f64.powi(j as i32)) * 2.0).exp();
            let (ea, eb) = ((ya[3 * j] - a).abs(), (ya[3 * j + 1] - (1.0 - a)).abs());
            assert!(
                ea < 1e-6 && eb < 1e-6,
                "j {j}: a error {ea:e}, b error {eb:e}"
            );
            assert_eq!(ya[3 * j + 2], y0[3 * j + 2], "c_{j} constant");
        }
    }
}

/// A state declared constant whose row of J is not empty (y₀' = −y₀: only its diagonal,
/// which the off-diagonal peel cannot see) is stepped as any other; the truly constant
/// y₁' = 0 beside it may be left out. Same bits as the undeclared twin; truth y₀ = e^(−t).
#[test]
fn a_declared_constant_state_with_a_row_is_stepped() {
    use super::{Bdf, Tolerances};
    use crate::integrators::Integrator;
    use crate::ode::OdeSystem;
    use crate::sparsity::Pattern;
    struct Decay {
        declared: bool,
    }
    impl OdeSystem for Decay {
        fn dimension(&self) -> usize {
            2
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -y[0];
            dy[1] = 0.0;
        }
        fn sparsity(&self) -> Option<Pattern> {
            Some(Pattern::from_entries(2, vec![(0, 0)]))
        }
        fn constant_states(&self) -> Vec<usize> {
            if self.declared {
                vec![0, 1]
            } else {
                Vec::new()
            }
        }
    }
    let run = |declared: bool| {
        let mut sys = Decay { declared };
        let mut b = Bdf::adaptive(2);
        b.tolerances = Tolerances {
            rtol: 1e-8,
            atol: 1e-12,
            ..Tolerances::default()
        };
        let (mut t, mut y, mut inc) = (0.0, vec![1.0, 3.0], vec![0.0; 2]);
        while t < 2.0 {
            let h = b.attempt(&mut sys, t, &y, 2.0 - t, &mut inc).expect("step");
            for (a, d) in y.iter_mut().zip(&inc) {
                *a += d;
            }
            t += h;
            b.commit(&mut sys, t, &y);
        }
        y
    };
    let (ya, yb) = (run(true), run(false));
    let err = (ya[0] - (-2.0f64).exp()).abs();
    println!(
        "y0(2) = {:.12} (error {err:.2e}), y1 = {}; twin {:?}",
        ya[0], ya[1], yb
    );
    assert!(err < 1e-6, "y0 was stepped: error {err:e}");
    assert_eq!(ya[1], 3.0);
    assert_eq!(ya[0].to_bits(), yb[0].to_bits());
}

/// y' = −y with its quadrature q' = y (q feeds nothing back), from (1, 0) to t = 5: with q
/// named a quadrature the adaptive BDF leaves it out of its error test, as CVODES does.
/// Truth: y = e^(−t), q = 1 − e^(−t), and y + q = 1 (a linear invariant every linear
/// multistep method keeps whatever its steps).
#[test]
fn quadratures_leave_the_error_test_and_keep_their_accuracy() {
    use super::{Bdf, Tolerances};
    use crate::integrators::Integrator;
    use crate::ode::OdeSystem;
    struct Decay {
        named: bool,
    }
    impl OdeSystem for Decay {
        fn dimension(&self) -> usize {
            2
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -y[0];
            dy[1] = y[0];
        }
        fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
            [if self.named { 1..2 } else { 0..0 }, 0..0]
        }
    }
    let rtol = 1e-8;
    let mut steps = [0usize; 2];
    for (k, named) in [false, true].into_iter().enumerate() {
        let mut sys = Decay { named };
        let mut b = Bdf::adaptive(2);
        b.tolerances = Tolerances {
            rtol,
            atol: 1e-15,
            ..Tolerances::default()
        };
        let (mut t, mut y, mut inc) = (0.0, vec![1.0, 0.0], vec![0.0; 2]);
        while t < 5.0 {
            let h = b.attempt(&mut sys, t, &y, 5.0 - t, &mut inc).expect("step");
            for (a, d) in y.iter_mut().zip(&inc) {
                *a += d;
            }
            t += h;
            b.commit(&mut sys, t, &y);
            steps[k] += 1;
        }
        let exact = (-t).exp();
        let (ey, eq) = ((y[0] - exact).abs() / exact, (y[1] - (1.0 - exact)).abs());
        let inv = (y[0] + y[1] - 1.0).abs();
        println!(
            "quadrature named {named}: {} steps, y error {ey:.2e} (relative), q error \
             {eq:.2e}, |y + q − 1| {inv:.1e}",
            steps[k]
        );
        assert!(ey < 100.0 * rtol, "y error {ey:e}");
        assert!(eq < 100.0 * rtol, "q error {eq:e}");
        assert!(inv < 1e-14, "invariant {inv:e}");
    }
    // q starts at 0: with atol ≪ 1 its weight is huge at first and holds the steps small.
    assert!(steps[1] < steps[0], "{steps:?}");
}

/// A restored state whose last step `dense` could not interpolate (a starter step
/// without the starter's storage, or an order outside 1..=5) is refused by
/// `validate_state`, not met by a panic at the next output time.
#[test]
fn restored_last_steps_that_dense_cannot_read_are_refused() {
    use super::Bdf;
    use crate::integrators::Integrator;
    use crate::ode::OdeSystem;
    struct Decay;
    impl OdeSystem for Decay {
        fn dimension(&self) -> usize {
            1
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -y[0];
        }
    }
    let (mut sys, y) = (Decay, vec![1.0]);
    let mut inc = vec![0.0];
    let mut b = Bdf::adaptive(1);
    let h = b.attempt(&mut sys, 0.0, &y, 0.1, &mut inc).expect("step");
    assert!(h > 0.0 && b.last.valid && !b.last.starter);
    assert_eq!(b.validate_state(1), Ok(()));
    let mut starter = b.clone();
    starter.last.starter = true;
    let e = starter
        .validate_state(1)
        .expect_err("adaptive BDF has no starter");
    println!("starter step on adaptive bdf: {e}");
    assert!(e.contains("starter"), "{e}");
    // Started or not: `check_history` checks the order of a started history only.
    for (q, started) in [(0, true), (0, false), (6, false)] {
        let mut bad = b.clone();
        bad.trial.q = q;
        bad.trial.started = started;
        let e = bad.validate_state(1).expect_err("order out of range");
        println!("trial order {q}, started {started}: {e}");
        assert!(e.contains("order"), "{e}");
    }
}

/// bdf1 starts from its one point and never reads or writes the start points: the
/// committed ones are not copied into the working history at each attempt and commit.
/// Marked committed start points stay out of the working
/// copy, and the steps are bit for bit those of an unmarked run. Truth: y' = −y,
/// backward Euler's y_k = (1 + h)^(−k).
#[test]
fn bdf1_leaves_its_start_points_alone() {
    use super::Bdf;
    use crate::integrators::Integrator;
    use crate::ode::OdeSystem;
    struct Decay;
    impl OdeSystem for Decay {
        fn dimension(&self) -> usize {
            1
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -y[0];
        }
    }
    let h = 0.1;
    let mut runs = Vec::new();
    for marked in [false, true] {
        let (mut sys, mut y, mut inc, mut t) = (Decay, vec![1.0], vec![0.0], 0.0);
        let mut b = Bdf::fixed(1, 1);
        let mut ys = Vec::new();
        for k in 0..20 {
            b.attempt(&mut sys, t, &y, h, &mut inc).expect("step");
            y[0] += inc[0];
            t += h;
            b.commit(&mut sys, t, &y);
            if marked && k == 0 {
                b.hist.start_y.fill(7.0);
            }
            ys.push(y[0]);
        }
        if marked {
            println!("working start points after 20 steps: {:?}", b.trial.start_y);
            assert!(b.trial.start_y.iter().all(|&v| v == 0.0));
            assert!(b.hist.start_y.iter().all(|&v| v == 7.0));
        }
        runs.push(ys);
    }
    assert_eq!(runs[0], runs[1]);
    // Backward Euler solved by Newton on a linear system: exact to round-off.
    let want = (1.0f64 + h).powi(-20);
    println!("y(2) = {}, (1 + h)^-20 = {want}", runs[0][19]);
    assert!((runs[0][19] - want).abs() < 1e-14);
}

/// The adaptive method's copies between the committed and the working history leave the
/// start points (times, count) alone, which it never writes: start points marked in the
/// committed copy after the first step stay there, the working copy keeps its own, and the
/// steps are bit for bit those of an unmarked run.
#[test]
fn adaptive_copies_leave_the_start_points_alone() {
    use super::Bdf;
    use crate::integrators::Integrator;
    use crate::ode::OdeSystem;
    struct Decay;
    impl OdeSystem for Decay {
        fn dimension(&self) -> usize {
            2
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -y[0];
            dy[1] = -50.0 * (y[1] - y[0]);
        }
    }
    let mut runs = Vec::new();
    for marked in [false, true] {
        let (mut sys, mut y, mut inc, mut t) = (Decay, vec![1.0, 0.0], vec![0.0; 2], 0.0);
        let mut b = Bdf::adaptive(2);
        b.tolerances.rtol = 1e-6;
        b.tolerances.atol = 1e-10;
        let mut ys = Vec::new();
        for k in 0..30 {
            let h = b.attempt(&mut sys, t, &y, 1.0, &mut inc).expect("step");
            y[0] += inc[0];
            y[1] += inc[1];
            t += h;
            b.commit(&mut sys, t, &y);
            if marked && k == 0 {
                b.hist.start_t = [7.0; super::MAX_ORDER + 1];
                b.hist.start_len = 3;
            }
            ys.push((t, y.clone()));
        }
        if marked {
            println!(
                "after 30 steps: committed start {:?} ({}), working {:?} ({})",
                b.hist.start_t, b.hist.start_len, b.trial.start_t, b.trial.start_len
            );
            assert!(b.hist.start_t.iter().all(|&v| v == 7.0) && b.hist.start_len == 3);
            assert!(b.trial.start_t.iter().all(|&v| v == 0.0) && b.trial.start_len == 0);
        }
        runs.push(ys);
    }
    assert_eq!(runs[0], runs[1]);
    let (t, y) = runs[0].last().expect("steps");
    println!("y({t}) = {}, exp(-t) = {}", y[0], (-t).exp());
    assert!((y[0] - (-t).exp()).abs() < 1e-4);
}

/// A closed chamber's mass (no flow link: `Network::constant_states`) leaves the small LU:
/// on `cantera_wall` (two closed chambers joined by a wall) the LU runs over (U, V) of each,
/// 4 states instead of 6, and the masses stay their initial values exactly. Its twin, the
/// same network with the masses not declared, keeps them in the LU; without heat transfer
/// (J's columns of the masses then 0) the two give the same bits, with it they agree to
/// round-off. A vented chamber's mass is not declared, nor one behind a piston.
#[test]
fn closed_chamber_masses_leave_the_small_lu() {
    use super::{Bdf, Tolerances};
    use crate::integrators::Integrator;
    use crate::integrators::linsolve::small::SMALL_SEL;
    use crate::network::Network;
    use crate::ode::OdeSystem;
    use crate::sparsity::Pattern;
    struct Twin {
        net: Network,
        masses: bool,
    }
    impl OdeSystem for Twin {
        fn dimension(&self) -> usize {
            self.net.dimension()
        }
        fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
            self.net.rhs(t, y, dy)
        }
        fn sparsity(&self) -> Option<Pattern> {
            self.net.sparsity()
        }
        fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
            self.net.quadratures()
        }
        fn constant_states(&self) -> Vec<usize> {
            let masses = self.masses;
            let mut c = self.net.constant_states();
            c.retain(|&i| masses || i % crate::components::chamber::STATES != 0);
            c
        }
        fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], f: &mut [f64], jv: &mut [f64]) -> bool {
            self.net.jvp(t, y, v, f, jv)
        }
    }
    let net_of = |src: &str, set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let model = crate::model::parse_str(src, "model.toml", &set).unwrap();
        crate::model::build_network(&model.spec)
    };
    let wall = include_str!("../../../compliance-tests/peers/models/cantera_wall.toml");
    let vent = include_str!("../../../compliance-tests/peers/models/cantera_vent.toml");
    assert_eq!(net_of(wall, &[]).constant_states(), vec![0, 3]);
    assert_eq!(
        net_of(vent, &[]).constant_states(),
        vec![2],
        "the vent's volume only"
    );
    // A piston's chamber, with an exit (its bore opens) or without (a restored state may
    // still say it left): no constant mass.
    let gun = include_str!("../../../models/projectile.toml");
    let stuck = gun.replace("x_exit = 0.6", "");
    for src in [gun, &stuck] {
        let c = net_of(src, &[]).constant_states();
        assert!(!c.contains(&0), "the barrel's mass declared: {c:?}");
    }
    let run = |net: Network, masses: bool| {
        let mut sys = Twin { net, masses };
        let n = sys.dimension();
        let mut b = Bdf::adaptive(n);
        b.tolerances = Tolerances {
            rtol: 1e-7,
            atol: 1e-15,
            ..Tolerances::default()
        };
        let y0 = sys.net.initial_state();
        let (mut t, mut y, mut inc) = (0.0, y0.clone(), vec![0.0; n]);
        let mut steps = 0;
        while t < 2.0 {
            let h = b.attempt(&mut sys, t, &y, 2.0 - t, &mut inc).expect("step");
            for (a, d) in y.iter_mut().zip(&inc) {
                *a += d;
            }
            t += h;
            b.commit(&mut sys, t, &y);
            steps += 1;
            if masses {
                assert_eq!((y[0], y[3]), (y0[0], y0[3]), "masses at step {steps}");
            }
        }
        let kind = match &b.ws.linsolve.solver {
            Solver::Small(lu) => lu.kind,
            _ => 0,
        };
        let lu = (kind, b.ws.constant.clone());
        (y, steps, b.stats.newton_iterations, lu)
    };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for h in ["10", "0"] {
        let set = format!("wall.heat_transfer_coefficient={h}");
        let (ya, sa, na, lua) = run(net_of(wall, &[&set]), true);
        let (yb, sb, nb, lub) = run(net_of(wall, &[&set]), false);
        println!("h {h}: {sa} steps, {na} Newton iterations, LU {lua:?}; twin {sb}, {nb}, {lub:?}");
        assert_eq!(
            lua,
            (SMALL_SEL + 4, vec![0, 3]),
            "the LU over U, V of each chamber"
        );
        assert_eq!(lub, (6, vec![]), "the twin's LU over m, U, V of each");
        if h == "0" {
            assert_eq!((sa, na), (sb, nb));
            assert_eq!(bits(&ya), bits(&yb));
        } else {
            for (a, b) in ya.iter().zip(&yb) {
                assert!(
                    (a - b).abs() <= 1e-12 * a.abs().max(1e-9),
                    "{a} against {b}"
                );
            }
        }
    }
}

/// The direct solves split by `Peel` (first states: empty off-diagonal row of M; last:
/// empty column) equal a plain dense LU of the whole M = I − γJ to round-off, through each
/// linear solver (band, small, sparse and dense LU) on random values over patterns with
/// such states: one that depends only on itself (M_ii ≠ 1), one with no entry at all (both
/// row- and column-empty), row-empty states that others read, column-empty ones that read
/// others. The reference: Gaussian elimination with partial pivoting on the dense M.
#[test]
fn peeled_solves_equal_the_full_lu() {
    use super::{Bdf, LinearSolver, Pattern};
    use crate::ode::OdeSystem;
    struct Pat(Pattern);
    impl OdeSystem for Pat {
        fn dimension(&self) -> usize {
            self.0.n
        }
        fn rhs(&mut self, _t: f64, _y: &[f64], dy: &mut [f64]) {
            dy.fill(0.0);
        }
        fn sparsity(&self) -> Option<Pattern> {
            Some(self.0.clone())
        }
    }
    fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
        let n = b.len();
        for k in 0..n {
            let p = (k..n)
                .max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))
                .unwrap();
            a.swap(k, p);
            b.swap(k, p);
            for i in k + 1..n {
                let l = a[i][k] / a[k][k];
                for j in k..n {
                    a[i][j] -= l * a[k][j];
                }
                b[i] -= l * b[k];
            }
        }
        for k in (0..n).rev() {
            let s: f64 = (k + 1..n).map(|j| a[k][j] * b[j]).sum();
            b[k] = (b[k] - s) / a[k][k];
        }
        b
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut checked = 0;
    for (n, trial) in [(24, 0), (24, 1), (40, 2), (10, 3), (8, 4), (14, 5), (9, 6)] {
        // Kinds by index: 0 only itself, 1 nothing, 2.. every 3rd row-empty (read by
        // others), every 5th column-empty (reads others), the rest coupled; in trial 5
        // every state only itself (no LU at all); in trial 6 (small, too few first states
        // to halve the LU) the last three column-empty: the small LU's tail.
        let kind = |i: usize| match i {
            _ if trial == 5 => 's',
            _ if trial == 6 && i >= n - 3 => 'c',
            0 => 's',
            1 => 'o',
            _ if i % 3 == 2 => 'r',
            _ if i % 5 == 4 && n > 12 => 'c',
            _ => 'x',
        };
        let mut entries = Vec::new();
        for i in 0..n {
            for j in 0..n {
                let dep = if i == j {
                    kind(i) != 'o' && next() < 0.7
                } else {
                    // Row i reads column j; a narrow band in the small cases.
                    let (ki, kj) = (kind(i), kind(j));
                    let near = i.abs_diff(j) <= 3 || trial == 1;
                    !matches!(ki, 's' | 'o' | 'r')
                        && !matches!(kj, 's' | 'o' | 'c')
                        && near
                        && next() < 0.6
                };
                if dep || (i == 0 && j == 0) {
                    entries.push((j, i));
                }
            }
        }
        let pattern = Pattern::from_entries(n, entries);
        for linear in [
            LinearSolver::Auto,
            LinearSolver::Banded,
            LinearSolver::Sparse,
            LinearSolver::Dense,
        ] {
            let mut sys = Pat(pattern.clone());
            let mut bdf = Bdf::adaptive(n);
            bdf.set_linear_solver(linear);
            bdf.prepare(&sys).expect("prepared");
            let p = bdf.ws.m_pattern.clone().expect("pattern");
            let peel = bdf.ws.linsolve.peel.as_ref();
            let (nf, nl) = peel.map_or((0, 0), |p| (p.first.len(), p.last.len()));
            let (small, tail) = match &bdf.ws.linsolve.solver {
                Solver::Small(lu) => (true, lu.tail),
                _ => (false, 0),
            };
            let peeled = peel.is_some();
            let bdf_lu_empty = peel.is_some_and(|p| p.core.is_empty())
                && matches!(bdf.ws.linsolve.solver, Solver::None);
            let gamma = 0.7;
            let jac: Vec<f64> = (0..p.nonzeros()).map(|_| 2.0 * next() - 1.0).collect();
            let b: Vec<f64> = (0..n).map(|_| 2.0 * next() - 1.0).collect();
            let mut m = vec![vec![0.0; n]; n];
            for j in 0..n {
                for (k, &i) in p.column(j).iter().enumerate() {
                    m[i][j] = -gamma * jac[p.col_start[j] + k];
                }
                m[j][j] += 1.0;
            }
            let x_ref = dense_solve(m, b.clone());
            let mut st = bdf.stepper(&mut sys);
            st.s.jac.copy_from_slice(&jac);
            assert!(st.factor(gamma));
            st.ws.tempv.copy_from_slice(&b);
            assert!(st.solve());
            let scale = x_ref.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            let err = st
                .ws
                .tempv
                .iter()
                .zip(&x_ref)
                .fold(0.0f64, |a, (x, r)| a.max((x - r).abs() / scale));
            println!(
                "n {n}, trial {trial}, {linear:?}: {nf} first, {nl} last, small {small}, \
                 tail {tail}, max |x − x_ref|/max |x_ref| {err:.2e}"
            );
            assert!(err < 1e-12, "{err}");
            // The cases: both kinds split off above `SMALL_MAX`, the first ones below.
            if trial == 5 {
                assert!(nf == n && bdf_lu_empty, "{nf} first");
            } else if trial == 6 {
                let small_path = linear != LinearSolver::Sparse && linear != LinearSolver::Dense;
                assert!(!peeled && tail == if small_path { 3 } else { 0 });
            } else if n > SMALL_MAX {
                assert!(nf >= n / 3 && nl >= 2, "{nf} first, {nl} last");
            } else if linear != LinearSolver::Sparse && linear != LinearSolver::Dense {
                assert!(small && nf >= n / 2 && nl == 0, "{nf} first, {nl} last");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 28);
}

/// The network's block layout (`OdeSystem::BLOCKS`: each chamber's m, U, V, the volume usually
/// constant) reaches the BDF through the trait alone, and only as a hint: on the 20-tank chain
/// the Newton iteration runs block by block, fused with the direct solve's split, and a twin
/// that declares no layout (its passes go through lists of states) takes the same steps to the
/// same bits. Truth besides the twin: the mass the chain holds plus the mass that left stays
/// the initial mass (a linear invariant the BDF keeps to round-off).
#[test]
fn the_networks_block_layout_changes_no_bit() {
    use super::{Bdf, Tolerances};
    use crate::components::chamber;
    use crate::integrators::Integrator;
    use crate::network::Network;
    use crate::ode::{BlockLayout, OdeSystem};
    use crate::sparsity::Pattern;
    /// The network without its layout.
    struct NoBlocks(Network);
    impl OdeSystem for NoBlocks {
        fn dimension(&self) -> usize {
            self.0.dimension()
        }
        fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
            self.0.rhs(t, y, dy)
        }
        fn sparsity(&self) -> Option<Pattern> {
            self.0.sparsity()
        }
        fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
            self.0.quadratures()
        }
        fn constant_states(&self) -> Vec<usize> {
            self.0.constant_states()
        }
        fn linear_invariants(&self) -> Vec<Vec<usize>> {
            self.0.linear_invariants()
        }
        fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], f: &mut [f64], jv: &mut [f64]) -> bool {
            self.0.jvp(t, y, v, f, jv)
        }
    }
    assert_eq!(
        Network::BLOCKS,
        Some(BlockLayout {
            size: chamber::STATES,
            live: chamber::VOLUME
        })
    );
    assert_eq!(NoBlocks::BLOCKS, None);
    fn run<S: OdeSystem>(sys: &mut S, y0: &[f64]) -> (Vec<f64>, u64, u64, bool) {
        let n = y0.len();
        let mut b = Bdf::adaptive(n);
        b.tolerances = Tolerances {
            rtol: 3.2e-7,
            atol: 1e-15,
            ..Tolerances::default()
        };
        let (mut t, mut y, mut inc) = (0.0, y0.to_vec(), vec![0.0; n]);
        while t < 5.0 {
            let h = b.attempt(sys, t, &y, 5.0 - t, &mut inc).expect("step");
            for (a, d) in y.iter_mut().zip(&inc) {
                *a += d;
            }
            t += h;
            b.commit(sys, t, &y);
        }
        (y, b.stats.steps, b.stats.newton_iterations, b.ws.fused)
    }
    let src = include_str!("../../../compliance-tests/peers/models/cantera_chain20.toml");
    let model = crate::model::parse_str(src, "model.toml", &[]).unwrap();
    let mut net = crate::model::build_network(&model.spec);
    let y0 = net.initial_state();
    let (ya, steps, its, fused) = run(&mut net, &y0);
    let mut twin = NoBlocks(crate::model::build_network(&model.spec));
    let (yb, twin_steps, twin_its, twin_fused) = run(&mut twin, &y0);
    let mass = |y: &[f64]| -> f64 {
        let chambers = (0..20).map(|k| y[k * chamber::STATES + chamber::MASS]);
        chambers.sum::<f64>() + y[net.layout.accumulator_offset]
    };
    let drift = (mass(&ya) - mass(&y0)).abs() / mass(&y0);
    println!(
        "chain20 to 5 s: {steps} steps, {its} Newton iterations, fused {fused}; twin \
         {twin_steps}, {twin_its}, fused {twin_fused}; mass drift {drift:.1e}"
    );
    assert!(fused && !twin_fused, "the layout is what fuses the passes");
    assert_eq!((steps, its), (twin_steps, twin_its));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&ya), bits(&yb));
    assert!(drift < 1e-12, "mass drift {drift:e}");
}
