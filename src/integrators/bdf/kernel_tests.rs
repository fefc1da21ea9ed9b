//! Tests of the BDF's vector kernels: each against the plain passes it replaces, bit for bit.

use super::MAX_ORDER;
use super::nordsieck::{NORDSIECK_BLOCK, correct_blocked, predict_blocked, restore_small};
use super::step::finite_values;

/// `finite_values` against the per-value test it replaces, on finite values of every
/// magnitude and sign (zeros, subnormals, the largest) and with one ±∞ or NaN anywhere.
#[test]
fn finite_values_agrees_with_the_per_value_test() {
    let finite = [
        0.0,
        -0.0,
        1.0,
        -2.5e-310,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        -7.25e12,
    ];
    assert!(finite_values(&finite));
    assert!(finite_values(&[]));
    for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN] {
        // Every length (even and odd: the pairs and the odd value), the bad value anywhere.
        for len in 1..=finite.len() {
            assert!(finite_values(&finite[..len]));
            for k in 0..len {
                let mut v = finite;
                v[k] = bad;
                let v = &v[..len];
                assert!(!finite_values(v), "{bad} at {k} of {len}");
                assert_eq!(finite_values(v), v.iter().all(|x| x.is_finite()));
            }
        }
    }
}

/// The blocked Nordsieck sweeps give the bits of the column passes they replace (CVODE's
/// cvPredict and cvCompleteStep loop orders, written out here as the truth), for every order
/// and sizes below, at and across the block length.
#[test]
fn blocked_nordsieck_sweeps_equal_the_column_passes() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut draw = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut checked = 0;
    for n in [
        1,
        4,
        7,
        62,
        NORDSIECK_BLOCK,
        NORDSIECK_BLOCK + 1,
        3 * NORDSIECK_BLOCK - 5,
    ] {
        for q in 1..=MAX_ORDER {
            let zn0: Vec<f64> = (0..(q + 1) * n).map(|_| draw() * 1e3).collect();
            let acor: Vec<f64> = (0..n).map(|_| draw() * 1e-3).collect();
            let mut l = [0.0; MAX_ORDER + 1];
            for v in l.iter_mut().take(q + 1) {
                *v = draw();
            }
            // Truth: the column passes.
            let mut zt = zn0.clone();
            let mut inct = vec![0.0; n];
            for z in zt[n..].chunks_exact(n) {
                for (a, b) in inct.iter_mut().zip(z) {
                    *a += *b;
                }
            }
            for k in 1..=q {
                for j in (k..=q).rev() {
                    for i in 0..n {
                        zt[(j - 1) * n + i] += zt[j * n + i];
                    }
                }
            }
            let (mut zb, mut incb) = (zn0.clone(), vec![f64::NAN; n]);
            predict_blocked(&mut zb, &mut incb, n, q, None);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&zb), bits(&zt), "predict n {n} q {q}");
            assert_eq!(bits(&incb), bits(&inct), "increment n {n} q {q}");
            if n <= NORDSIECK_BLOCK {
                // The predictor undone (`Step::restore`), element by element.
                let (mut zr, mut zrt) = (zb.clone(), zt.clone());
                for k in 1..=q {
                    for j in (k..=q).rev() {
                        for i in 0..n {
                            zrt[(j - 1) * n + i] -= zrt[j * n + i];
                        }
                    }
                }
                match q {
                    1 => restore_small::<1, 2>(&mut zr, n),
                    2 => restore_small::<2, 3>(&mut zr, n),
                    3 => restore_small::<3, 4>(&mut zr, n),
                    4 => restore_small::<4, 5>(&mut zr, n),
                    _ => restore_small::<5, 6>(&mut zr, n),
                }
                assert_eq!(bits(&zr), bits(&zrt), "restore n {n} q {q}");
                checked += zr.len();
            }
            for (j, &lj) in l.iter().enumerate().take(q + 1) {
                for i in 0..n {
                    zt[j * n + i] += lj * acor[i];
                }
            }
            for i in 0..n {
                inct[i] += acor[i];
            }
            correct_blocked(&mut zb, &l, &acor, &mut incb, n, q, None);
            assert_eq!(bits(&zb), bits(&zt), "correct n {n} q {q}");
            assert_eq!(bits(&incb), bits(&inct), "correct inc n {n} q {q}");
            checked += zb.len() + incb.len();
        }
    }
    println!("blocked sweeps: {checked} values equal to the column passes bit for bit");
    assert!(checked > 0);
}

/// The predictor and corrector over the live states only (`Live`: pairs and singles) equal
/// the passes over every state bit for bit when the skipped states' higher Nordsieck
/// columns, corrections and increments are 0, for several masks (every third state skipped
/// as a chamber's volume, runs of odd length, none, all) and every order.
#[test]
fn live_sweeps_equal_the_full_passes() {
    use super::newton_passes::Live;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut draw = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let n = 23;
    let masks: [fn(usize) -> bool; 4] = [
        |i| i % 3 == 2,
        |i| matches!(i, 0 | 4 | 5 | 9 | 22),
        |_| false,
        |_| true,
    ];
    let mut checked = 0;
    for mask in masks {
        let constant: Vec<bool> = (0..n).map(mask).collect();
        let live = Live::of(&constant, None);
        let mut seen: Vec<usize> = live.singles.clone();
        seen.extend(live.pairs.iter().flat_map(|&p| [p, p + 1]));
        seen.sort_unstable();
        let expect: Vec<usize> = (0..n).filter(|&i| !constant[i]).collect();
        assert_eq!(seen, expect, "every live state once");
        for q in 1..=MAX_ORDER {
            let mut zn0: Vec<f64> = (0..(q + 1) * n).map(|_| draw() * 1e3).collect();
            let mut acor: Vec<f64> = (0..n).map(|_| draw() * 1e-3).collect();
            for i in (0..n).filter(|&i| constant[i]) {
                for j in 1..=q {
                    zn0[j * n + i] = 0.0;
                }
                acor[i] = 0.0;
            }
            let mut l = [0.0; MAX_ORDER + 1];
            for v in l.iter_mut().take(q + 1) {
                *v = draw();
            }
            let (mut zt, mut inct) = (zn0.clone(), vec![f64::NAN; n]);
            predict_blocked(&mut zt, &mut inct, n, q, None);
            let (mut zl, mut incl) = (zn0.clone(), inct.clone());
            for i in (0..n).filter(|&i| !constant[i]) {
                incl[i] = f64::NAN;
            }
            predict_blocked(&mut zl, &mut incl, n, q, Some(&live));
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&zl), bits(&zt), "predict q {q}");
            assert_eq!(bits(&incl), bits(&inct), "increment q {q}");
            correct_blocked(&mut zt, &l, &acor, &mut inct, n, q, None);
            correct_blocked(&mut zl, &l, &acor, &mut incl, n, q, Some(&live));
            assert_eq!(bits(&zl), bits(&zt), "correct q {q}");
            assert_eq!(bits(&incl), bits(&inct), "correct increment q {q}");
            checked += zl.len();
        }
    }
    println!("live sweeps: {checked} values equal to the full passes bit for bit");
}

/// The Newton iteration's residual and update over the live states only
/// (`newton_residual_live`, `newton_update_live`: the regular groups and the rest) equal
/// the passes over every state bit for bit when the constant states' f, z_1 and acor are
/// ±0 (f_i ≡ 0), y = z_0 and acor = 0 there (as `nls` sets them): the sum of squares, acor,
/// y and the live states' δ, with and without the drift scaling; for a chain's layout
/// (every third state constant, then two live accumulators), with a constant state after
/// the groups, and with a moving volume that ends the groups early. `Live::of` finds the
/// groups and the rest.
#[test]
fn newton_live_passes_equal_the_full_passes() {
    use super::newton_passes::{
        Live, newton_residual, newton_residual_live, newton_update, newton_update_live,
    };
    use crate::ode::BlockLayout;
    // A chain's chambers: (m, U) live, V constant.
    let blocks = BlockLayout { size: 3, live: 2 };
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut draw = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let chain: Vec<bool> = (0..62).map(|i| i < 60 && i % 3 == 2).collect();
    let mut late = chain.clone();
    late[61] = true;
    let mut moving = chain.clone();
    moving[20] = false;
    let cases = [(chain, 20, 2), (late, 20, 1), (moving, 6, 44 - 13)];
    let mut checked = 0;
    for (constant, groups, rest) in cases {
        let n = constant.len();
        let live = Live::of(&constant, Some(blocks));
        assert_eq!(
            (live.groups, live.rest.len()),
            (groups, rest),
            "{constant:?}"
        );
        let mut expect: Vec<usize> = (0..groups)
            .flat_map(|k| (0..blocks.live).map(move |r| blocks.size * k + r))
            .collect();
        expect.extend(&live.rest);
        let all: Vec<usize> = (0..n).filter(|&i| !constant[i]).collect();
        assert_eq!(expect, all, "every live state once, increasing");
        for (trial, scale) in [(0, false), (1, true), (2, true)] {
            let mut v = |scale: f64| -> Vec<f64> { (0..n).map(|_| draw() * scale).collect() };
            let (mut z1, mut f, mut acor) = (v(1e2), v(1e3), v(1e-3));
            let (z0, w) = (v(1e5), v(1e4));
            for i in (0..n).filter(|&i| constant[i]) {
                z1[i] = 0.0;
                acor[i] = 0.0;
                // f_i ≡ 0, computed as either zero.
                f[i] = if (i + trial) % 2 == 0 { 0.0 } else { -0.0 };
            }
            let (rl1, gamma, c) = (0.4 + draw().abs(), 1e-3 * draw().abs(), 1.0 + draw());
            let mut tv_full = vec![f64::NAN; n];
            newton_residual(&mut tv_full, &z1, &acor, &f, rl1, gamma, n);
            let mut tv_live = vec![f64::NAN; n];
            newton_residual_live(&mut tv_live, &z1, &acor, &f, rl1, gamma, n, &live, blocks);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for &i in &all {
                assert_eq!(tv_live[i].to_bits(), tv_full[i].to_bits(), "residual {i}");
            }
            // A linear solve's stand-in: the live states' δ changed, the others kept.
            for &i in &all {
                tv_full[i] *= 1.0 + 0.5 * draw();
                tv_live[i] = tv_full[i];
            }
            let (mut a_full, mut y_full) = (acor.clone(), z0.clone());
            let (mut a_live, mut y_live) = (acor.clone(), z0.clone());
            let sum_full =
                newton_update(&mut a_full, &mut y_full, &mut tv_full, &z0, &w, scale, c, n);
            let sum_live = newton_update_live(
                &mut a_live,
                &mut y_live,
                &mut tv_live,
                &z0,
                &w,
                scale,
                c,
                n,
                &live,
                blocks,
            );
            assert_eq!(sum_live.to_bits(), sum_full.to_bits(), "sum, trial {trial}");
            assert_eq!(bits(&a_live), bits(&a_full), "acor, trial {trial}");
            assert_eq!(bits(&y_live), bits(&y_full), "y, trial {trial}");
            for &i in &all {
                assert_eq!(tv_live[i].to_bits(), tv_full[i].to_bits(), "δ {i}");
            }
            checked += 3 * n + 1;
        }
    }
    println!("Newton live passes: {checked} values equal to the full passes bit for bit");
}
