//! Tests of the linear solvers' pieces: the small LU against the band LU and against its
//! selection, the split's gathers, the correction onto linear invariants.

use super::band::{band_factor, band_solve};
use super::krylov::correct_onto_invariants;
use super::small::{SMALL_MAX, SmallSel, small_factor, small_solve};

/// The correction onto a conserved sum is the least change in the weighted norm: by
/// Lagrange, Δ_i = w_i·d/Σw with w_i = 1/ewt_i² on the set, 0 off it, d the shortfall.
/// Checked against that closed form, and that it leaves the sum exact and other states alone.
#[test]
fn the_invariant_correction_is_the_least_weighted_change() {
    let ewt = [1.0, 2.0, 4.0, 0.5, 0.0];
    let x0 = [1.0, -2.0, 3.0, 0.25, 7.0];
    let sets = vec![vec![0, 1, 2], vec![3, 4]];
    let b = [5.0, 1.0];
    let mut x = x0;
    let mut w = [f64::NAN; 3];
    correct_onto_invariants(&mut x, &ewt, &sets, &b, &mut w);
    // The scratch holds the last set's weights, each computed once: (1/0.5², 0).
    assert_eq!(w[..2], [4.0, 0.0]);
    // Set 0: d = 5 − 2 = 3, w = (1, 1/4, 1/16), Σw = 21/16: Δ = (48/21, 12/21, 3/21).
    let want0 = [1.0 + 48.0 / 21.0, -2.0 + 12.0 / 21.0, 3.0 + 3.0 / 21.0];
    // Set 1: d = 1 − 7.25, w = (4, 0) (a zero weight takes nothing): Δ = (−6.25, 0).
    let want1 = [0.25 - 6.25, 7.0];
    println!("corrected {x:?}, want {want0:?} {want1:?}");
    for (a, b) in x[..3].iter().zip(&want0) {
        assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "{a} {b}");
    }
    assert_eq!(x[3], want1[0]);
    assert_eq!(x[4], want1[1]);
    assert!((x[0] + x[1] + x[2] - 5.0).abs() <= 8.0 * f64::EPSILON);
    // A set whose weights are all zero is left as it is.
    let mut y = x0;
    correct_onto_invariants(&mut y, &[0.0; 5], &sets, &b, &mut w);
    assert_eq!(y, x0);
}

/// The small LU through a selection (`SmallSel`: constant states with an empty row left
/// out, their columns dropped) gives, on the other states, the bits of the plain small LU of
/// the matrix without them; the constant states' b (0) is left alone. Constant states
/// interleaved with the kept ones, with full columns (a closed chamber's mass reaches its
/// energy's row through the temperature), and a tail of quadratures.
#[test]
fn small_selection_equals_the_reduced_lu() {
    use super::small::small_lu;
    use crate::sparsity::Pattern;
    fn run<const N: usize>(constant: &[usize], tail: usize, seed: &mut u64) {
        let mut next = || {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let n = N + constant.len() + tail;
        let head = n - tail;
        let kept: Vec<usize> = (0..head).filter(|i| !constant.contains(i)).collect();
        assert_eq!(kept.len(), N);
        // M's pattern (diagonal included): constant rows hold their diagonal only, tail
        // columns theirs only; every other entry present, in rows ascending.
        let mut entries = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let row_ok = !constant.contains(&i) || i == j;
                let col_ok = j < head || i == j;
                if row_ok && col_ok {
                    entries.push((j, i));
                }
            }
        }
        let p = Pattern::from_entries(n, entries);
        // J small against 1/γ off the diagonal, but large enough that the LU pivots.
        let jac: Vec<f64> = p.rows.iter().map(|_| 3.0 * next()).collect();
        let gamma = 0.7;
        // The reduced system: the kept states, then the tail, in order.
        let order: Vec<usize> = kept.iter().copied().chain(head..n).collect();
        let mut red_entries = Vec::new();
        let mut red_vals = Vec::new();
        for (rj, &j) in order.iter().enumerate() {
            for k in p.col_start[j]..p.col_start[j + 1] {
                if let Some(ri) = order.iter().position(|&o| o == p.rows[k]) {
                    red_entries.push((rj, ri, jac[k]));
                }
            }
        }
        red_entries.sort_by_key(|e| (e.0, e.1));
        let rp = Pattern::from_entries(
            order.len(),
            red_entries.iter().map(|e| (e.0, e.1)).collect(),
        );
        red_vals.extend(red_entries.iter().map(|e| e.2));
        let mut sel = SmallSel {
            tail_start: head,
            ..SmallSel::default()
        };
        for (k, &i) in kept.iter().enumerate() {
            sel.state[k] = i;
            sel.row[i] = k;
        }
        for (q, i) in (head..n).enumerate() {
            sel.row[i] = N + q;
        }
        let zero = SmallSel::default();
        let (mut a, mut piv, mut d) = (
            [[0.0; SMALL_MAX]; SMALL_MAX],
            [0; SMALL_MAX],
            [0.0; SMALL_MAX],
        );
        let (mut ra, mut rpiv, mut rd) = (a, piv, d);
        assert!(small_lu::<N, true>(
            &mut a, &mut piv, &mut d, &p, &jac, gamma, &sel
        ));
        assert!(small_lu::<N, false>(
            &mut ra, &mut rpiv, &mut rd, &rp, &red_vals, gamma, &zero
        ));
        assert_eq!(piv[..N], rpiv[..N], "pivots");
        let mut b: Vec<f64> = (0..n).map(|_| next()).collect();
        for &c in constant {
            b[c] = 0.0;
        }
        let mut rb: Vec<f64> = order.iter().map(|&i| b[i]).collect();
        small_solve::<N, true>(&a, &piv, &d, &mut b, &sel);
        small_solve::<N, false>(&ra, &rpiv, &rd, &mut rb, &zero);
        for (k, &i) in order.iter().enumerate() {
            assert_eq!(b[i].to_bits(), rb[k].to_bits(), "N {N}, state {i}");
        }
        for &c in constant {
            assert_eq!(b[c].to_bits(), 0.0f64.to_bits(), "constant {c} moved");
        }
        let swaps = (0..N).filter(|&j| piv[j] != j).count();
        println!("N {N}, constants {constant:?}, tail {tail}: {swaps} swaps, same bits");
    }
    let mut seed = 11u64;
    // The wall's layout (m U V m U V | swept, two accumulators) and the piston's.
    run::<4>(&[0, 3], 3, &mut seed);
    run::<2>(&[0], 3, &mut seed);
    run::<1>(&[1, 2], 0, &mut seed);
    run::<6>(&[0, 3, 6], 3, &mut seed);
    run::<9>(&[2], 2, &mut seed);
}

/// The small dense LU (`small_factor`, `small_solve`) against the band kernels it replaces
/// for n ≤ SMALL_MAX: the same pivots and the same solution bits (== also equates ±0, the
/// only difference the extra x − 0·u can make), on band systems with interchanges and with
/// exact zeros inside the band; and the solution against the x that made b (relative error
/// ≤ 1e-10, the systems' condition allowing).
#[test]
fn small_lu_gives_the_band_lu_bits() {
    fn run<const N: usize>(kl: usize, ku: usize, holes: bool, seed: &mut u64) {
        let n = N;
        let mut next = || {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let (ld, kv) = (2 * kl + ku + 1, kl + ku);
        let mut ab = vec![0.0; ld * n];
        let mut small = [[0.0; SMALL_MAX]; SMALL_MAX];
        let mut full = vec![vec![0.0; n]; n];
        for (i, row) in full.iter_mut().enumerate() {
            for (j, a) in row.iter_mut().enumerate() {
                let hole = holes && i != j && (i % 3 == 2 || j % 3 == 2);
                if i <= j + kl && j <= i + ku && !hole {
                    // Small diagonal: pivoting happens.
                    *a = if i == j { 1e-3 * next() } else { next() };
                    ab[j * ld + kv + i - j] = *a;
                    small[j][i] = *a;
                }
            }
        }
        let x_true: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / 3.0).collect();
        let b: Vec<f64> = full
            .iter()
            .map(|row| row.iter().zip(&x_true).map(|(a, x)| a * x).sum())
            .collect();
        let (mut ipiv, mut counts, mut piv) = (vec![0; n], vec![0; 2 * n], [0; SMALL_MAX]);
        assert!(band_factor(&mut ab, &mut ipiv, &mut counts, n, kl, ku));
        assert!(small_factor::<N>(&mut small, &mut piv));
        assert_eq!(ipiv[..], piv[..n], "n {n}, kl {kl}, ku {ku}: pivots");
        let (mut xb, mut xs) = (b.clone(), b.clone());
        band_solve(&ab, &ipiv, &counts, n, kl, ku, &mut xb);
        small_solve::<N, false>(
            &small,
            &piv,
            &[0.0; SMALL_MAX],
            &mut xs,
            &SmallSel::default(),
        );
        assert_eq!(xb, xs, "n {n}, kl {kl}, ku {ku}, holes {holes}: solutions");
        let err = xs
            .iter()
            .zip(&x_true)
            .map(|(a, b)| (a - b).abs() / b)
            .fold(0.0, f64::max);
        let swaps = (0..n).filter(|&j| ipiv[j] != j).count();
        println!("n {n}, kl {kl}, ku {ku}, holes {holes}: {swaps} swaps, error {err:.1e}");
        assert!(err < 1e-10, "n {n}: error {err:e}");
    }
    let mut seed = 7u64;
    for holes in [false, true] {
        run::<1>(0, 0, holes, &mut seed);
        run::<2>(1, 1, holes, &mut seed);
        run::<5>(4, 2, holes, &mut seed);
        run::<5>(1, 1, holes, &mut seed);
        run::<6>(5, 5, holes, &mut seed);
        run::<8>(2, 3, holes, &mut seed);
        run::<9>(8, 1, holes, &mut seed);
        run::<12>(11, 11, holes, &mut seed);
        run::<12>(3, 4, holes, &mut seed);
    }
}

/// `Peel`'s gather and scatter by groups (`Peel::groups`: the coupled states are the first
/// two of every three, a chain of chambers with fixed volumes) move the same values as
/// through `core`: on a 20-chamber chain's pattern (each chamber's mass and energy coupled
/// to its neighbours', its volume constant, two accumulators reading the last chamber) the
/// groups are found, and `before` and `after` give the indexed path's bits; a pattern
/// whose coupled states are not in that layout (a moving volume) has none.
#[test]
fn peel_groups_move_the_core_values() {
    use super::peel::Peel;
    use crate::ode::{BlockLayout, OdeSystem};
    use crate::sparsity::Pattern;
    /// The chambers' layout, declared as a network declares it.
    struct Chambers;
    impl OdeSystem for Chambers {
        const BLOCKS: Option<BlockLayout> = Some(BlockLayout { size: 3, live: 2 });
        fn dimension(&self) -> usize {
            0
        }
        fn rhs(&mut self, _t: f64, _y: &[f64], _dy: &mut [f64]) {}
    }
    let (chambers, n) = (20usize, 62);
    let layout = |moving: Option<usize>| {
        let mut entries = Vec::new();
        for k in 0..chambers {
            for d in [k.wrapping_sub(1), k, k + 1] {
                if d < chambers {
                    for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (1, 2)] {
                        // Row 3k + r reads column 3d + c (the volume its own only).
                        if c < 2 || d == k {
                            entries.push((3 * d + c, 3 * k + r));
                        }
                    }
                }
            }
            if moving == Some(k) {
                entries.push((3 * k, 3 * k + 2));
            }
        }
        for acc in [60, 61] {
            entries.push((57, acc));
            entries.push((58, acc));
        }
        let constant: Vec<bool> = (0..n)
            .map(|i| i < 60 && i % 3 == 2 && moving != Some(i / 3))
            .collect();
        (
            Pattern::from_entries(n, entries).with_diagonal().0,
            constant,
        )
    };
    let (p, constant) = layout(None);
    let mut peel = Peel::of(&p, true, 1, &constant, Chambers::BLOCKS).expect("split");
    assert_eq!((peel.groups, peel.core.len(), peel.last.len()), (20, 40, 2));
    let mut seed = 11u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let jac: Vec<f64> = (0..p.nonzeros()).map(|_| next()).collect();
    assert!(peel.factor(&jac, 0.3, true));
    let b: Vec<f64> = (0..n).map(|_| next()).collect();
    let (mut grouped, mut indexed) = (b.clone(), b.clone());
    peel.before::<Chambers>(&mut grouped);
    let gathered = peel.b.clone();
    peel.groups = 0;
    peel.before::<Chambers>(&mut indexed);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&gathered), bits(&peel.b), "gather");
    assert_eq!(bits(&grouped), bits(&indexed));
    let x: Vec<f64> = (0..peel.b.len()).map(|_| next()).collect();
    peel.b.copy_from_slice(&x);
    peel.after::<Chambers>(&mut indexed);
    peel.groups = 20;
    peel.after::<Chambers>(&mut grouped);
    assert_eq!(
        bits(&grouped),
        bits(&indexed),
        "scatter and the last states"
    );
    assert!(grouped != b);
    let (p, constant) = layout(Some(7));
    let peel = Peel::of(&p, true, 1, &constant, Chambers::BLOCKS).expect("split");
    assert_eq!((peel.groups, peel.core.len()), (0, 41));
}
