//! Tests of the band LU: the specialised kernels against the generic ones and the mapped
//! fill against the column-by-column fill, bit for bit; solutions against known x.

use super::{
    FillMap, SPECIALISED_MAX, band_factor, band_fill, band_fill_mapped, band_solve, factor_any,
    fill_any, solve_any,
};
use crate::sparsity::Pattern;

/// Uniform values in [−1, 1) from a 64-bit linear congruential generator (Knuth's MMIX
/// constants): deterministic test matrices without a dependency.
fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// The kernels monomorphized on the widths give the generic kernels' bits: factors, pivots,
/// extents and solutions, for every specialised width, on random bands with small
/// diagonals (row interchanges), with exact zeros inside the band (a chamber without a
/// piston) and with n from below the band's depth to well above it; and `band_fill`'s
/// storage is `fill_any`'s, in the own and in a permuted order.
#[test]
fn specialised_band_kernels_give_the_generic_bits() {
    let mut next = uniform(2024u64);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mut widths = Vec::new();
    for k in 1..=SPECIALISED_MAX {
        let (kl, ku) = (k, k);
        widths.push(k);
        let ld = 2 * kl + ku + 1;
        let mut swaps = 0;
        for n in [1, 2, k, k + 1, 3 * k + 2, 62, 200] {
            for (diag, holes) in [(1e-3, false), (10.0, false), (1e-3, true), (1e-2, true)] {
                // M's pattern (every entry in the band but the holes) and values.
                let mut cols = Vec::new();
                for j in 0..n {
                    let mut col = Vec::new();
                    for i in j.saturating_sub(ku)..(j + kl + 1).min(n) {
                        let hole = holes && i != j && (i % 3 == 2 || j % 3 == 2);
                        if !hole {
                            col.push((i, next()));
                        }
                    }
                    cols.push(col);
                }
                let col_start: Vec<usize> = std::iter::once(0)
                    .chain(cols.iter().scan(0, |s, c| {
                        *s += c.len();
                        Some(*s)
                    }))
                    .collect();
                let rows: Vec<usize> = cols.iter().flatten().map(|e| e.0).collect();
                let jac: Vec<f64> = cols.iter().flatten().map(|e| e.1).collect();
                let p = Pattern { n, col_start, rows };
                // γ: the diagonal of M = I − γJ is 1 − γ·J_jj; large γ, small diagonals.
                let gamma = 1.0 / diag;
                let mut ab = vec![f64::NAN; ld * n];
                let mut ab2 = vec![f64::NAN; ld * n];
                band_fill(&mut ab, n, kl, ku, &p, &jac, gamma, &[]);
                fill_any(&mut ab2, n, kl, ku, &p, &jac, gamma, &[]);
                assert_eq!(bits(&ab), bits(&ab2), "fill, n {n}, k {k}");
                // A permuted order: the reversal keeps the band's widths (swapped, equal).
                let rev: Vec<usize> = (0..n).rev().collect();
                let (mut ar, mut ar2) = (vec![f64::NAN; ld * n], vec![f64::NAN; ld * n]);
                band_fill(&mut ar, n, kl, ku, &p, &jac, gamma, &rev);
                fill_any(&mut ar2, n, kl, ku, &p, &jac, gamma, &rev);
                assert_eq!(bits(&ar), bits(&ar2), "fill reversed, n {n}, k {k}");
                check_mapped_fill(&p, kl, ku, &jac, gamma, &ab, &ar);
                let b: Vec<f64> = (0..n).map(|_| next()).collect();
                let (mut x, mut x2) = (b.clone(), b);
                let (mut ipiv, mut ipiv2) = (vec![0; n], vec![0; n]);
                let (mut counts, mut counts2) = (vec![0; 2 * n], vec![0; 2 * n]);
                let ok = band_factor(&mut ab, &mut ipiv, &mut counts, n, kl, ku);
                let ok2 = factor_any(&mut ab2, &mut ipiv2, &mut counts2, n, kl, ku);
                assert_eq!(ok, ok2, "n {n}, k {k}");
                assert!(ok, "n {n}, k {k}: singular");
                band_solve(&ab, &ipiv, &counts, n, kl, ku, &mut x);
                solve_any(&ab2, &ipiv2, &counts2, n, kl, ku, &mut x2);
                assert_eq!(ipiv, ipiv2, "n {n}, k {k}");
                assert_eq!(counts, counts2, "n {n}, k {k}");
                assert_eq!(bits(&ab), bits(&ab2), "factors, n {n}, k {k}");
                assert_eq!(bits(&x), bits(&x2), "solution, n {n}, k {k}");
                swaps += (0..n).filter(|&j| ipiv[j] != j).count();
            }
        }
        assert!(swaps > 0, "k {k}: no row interchange exercised");
    }
    println!("widths (kl = ku) checked against the generic kernels: {widths:?}");
}

/// `band_fill_mapped` (the BDF's fill, through a `FillMap`) gives `band_fill`'s storage bit
/// for bit: in the states' own order (`own`, widths kl, ku) and in the reversed one (`rev`,
/// which swaps the widths), and with J's values read through an index map (`src`: the
/// coupled block of `bdf::Peel`).
fn check_mapped_fill(
    p: &Pattern,
    kl: usize,
    ku: usize,
    jac: &[f64],
    gamma: f64,
    own: &[f64],
    rev: &[f64],
) {
    let (n, ld) = (p.n, 2 * kl + ku + 1);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mut am = vec![f64::NAN; ld * n];
    band_fill_mapped(
        &mut am,
        n,
        kl,
        ku,
        &FillMap::new(p, kl, ku, &[], &[]),
        jac,
        gamma,
    );
    assert_eq!(bits(&am), bits(own), "mapped fill, n {n}, kl {kl}, ku {ku}");
    let order: Vec<usize> = (0..n).rev().collect();
    let src: Vec<usize> = (0..jac.len()).rev().collect();
    let jrev: Vec<f64> = jac.iter().rev().copied().collect();
    let mut ar = vec![f64::NAN; (2 * ku + kl + 1) * n];
    let map = FillMap::new(p, ku, kl, &src, &order);
    band_fill_mapped(&mut ar, n, ku, kl, &map, &jrev, gamma);
    assert_eq!(
        bits(&ar),
        bits(rev),
        "mapped fill through src, reversed, n {n}, kl {kl}, ku {ku}"
    );
}

/// `check_mapped_fill` on widths without their own kernels (kl ≠ ku: the generic zeroing).
#[test]
fn mapped_fill_of_generic_widths() {
    let mut next = uniform(99u64);
    for (kl, ku, n) in [(2usize, 4usize, 17usize), (3, 1, 9), (9, 9, 30)] {
        let mut entries = Vec::new();
        for j in 0..n {
            for i in j.saturating_sub(ku)..(j + kl + 1).min(n) {
                if i == j || next() > 0.0 {
                    entries.push((j, i));
                }
            }
        }
        let p = Pattern::from_entries(n, entries);
        let jac: Vec<f64> = (0..p.rows.len()).map(|_| next()).collect();
        let ld = 2 * kl + ku + 1;
        let mut own = vec![f64::NAN; ld * n];
        band_fill(&mut own, n, kl, ku, &p, &jac, 0.7, &[]);
        // The reversal swaps the widths.
        let order: Vec<usize> = (0..n).rev().collect();
        let mut rev_sw = vec![f64::NAN; (2 * ku + kl + 1) * n];
        band_fill(&mut rev_sw, n, ku, kl, &p, &jac, 0.7, &order);
        check_mapped_fill(&p, kl, ku, &jac, 0.7, &own, &rev_sw);
    }
}

/// The band kernels as generic loops over the short columns, kept as the reference the
/// unrolled ones must match bit for bit.
fn band_factor_generic(
    ab: &mut [f64],
    ipiv: &mut [usize],
    counts: &mut [usize],
    n: usize,
    kl: usize,
    ku: usize,
) -> bool {
    let ld = 2 * kl + ku + 1;
    let kv = kl + ku;
    debug_assert!(ab.len() >= ld * n && ipiv.len() >= n && counts.len() >= 2 * n);
    let (lcount, ucount) = counts.split_at_mut(n);
    // Last column touched by the row operations so far.
    let mut ju = 0;
    for j in 0..n {
        let km = kl.min(n - 1 - j);
        let col = &ab[j * ld + kv..j * ld + kv + km + 1];
        let mut jp = 0;
        let mut big = col[0].abs();
        for (r, v) in col.iter().enumerate().skip(1) {
            if v.abs() > big {
                big = v.abs();
                jp = r;
            }
        }
        ipiv[j] = j + jp;
        let pivot = col[jp];
        if pivot == 0.0 || !pivot.is_finite() {
            return false;
        }
        ju = ju.max((j + ku + jp).min(n - 1));
        if jp != 0 {
            // Swap rows j and j + jp in columns j..=ju.
            for c in j..=ju {
                ab.swap(c * ld + kv + j - c, c * ld + kv + j + jp - c);
            }
        }
        let mut lm = km;
        if km > 0 {
            let inv = 1.0 / ab[j * ld + kv];
            let mult = &mut ab[j * ld + kv + 1..j * ld + kv + km + 1];
            for v in mult.iter_mut() {
                *v *= inv;
            }
            while lm > 0 && mult[lm - 1] == 0.0 {
                lm -= 1;
            }
        }
        lcount[j] = lm;
        if lm > 0 {
            // Rank-1 update of the trailing band: A(j+r, c) −= l(j+r)·u(j, c).
            let (left, right) = ab.split_at_mut((j + 1) * ld);
            let l = &left[j * ld + kv + 1..j * ld + kv + 1 + lm];
            for (k, colc) in right[..(ju - j) * ld].chunks_exact_mut(ld).enumerate() {
                // Column c = j + 1 + k: u(j, c) sits k + 1 rows above its diagonal.
                let top = kv - k - 1;
                let u = colc[top];
                if u != 0.0 {
                    for (a, &m) in colc[top + 1..top + 1 + lm].iter_mut().zip(l) {
                        *a -= m * u;
                    }
                }
            }
        }
    }
    for (j, (uc, colj)) in ucount.iter_mut().zip(ab.chunks_exact(ld)).enumerate() {
        let above = &colj[kv - kv.min(j)..kv];
        *uc = above.len() - above.iter().take_while(|&&v| v == 0.0).count();
    }
    true
}

fn band_solve_generic(
    ab: &[f64],
    ipiv: &[usize],
    counts: &[usize],
    n: usize,
    kl: usize,
    ku: usize,
    b: &mut [f64],
) {
    let ld = 2 * kl + ku + 1;
    let kv = kl + ku;
    let (b, ab) = (&mut b[..n], &ab[..ld * n]);
    let (lcount, ucount) = counts[..2 * n].split_at(n);
    // L: the row interchanges and the multipliers, column by column.
    for (j, ((col, &l), &lm)) in ab.chunks_exact(ld).zip(&ipiv[..n]).zip(lcount).enumerate() {
        if l != j {
            b.swap(l, j);
        }
        let (done, rest) = b.split_at_mut(j + 1);
        let bj = done[j];
        if lm > 0 && bj != 0.0 {
            for (x, &mi) in rest[..lm].iter_mut().zip(&col[kv + 1..kv + 1 + lm]) {
                *x -= mi * bj;
            }
        }
    }
    // U (upper bandwidth kv): back substitution by columns.
    for (j, (col, &um)) in ab.chunks_exact(ld).zip(ucount).enumerate().rev() {
        let (above, from_j) = b.split_at_mut(j);
        from_j[0] /= col[kv];
        let bj = from_j[0];
        let len = above.len();
        for (x, &ui) in above[len - um..].iter_mut().zip(&col[kv - um..kv]) {
            *x -= ui * bj;
        }
    }
}

/// The unrolled band kernels perform the same operations in the same order as the generic
/// loops: identical bits of the factors, pivots, extents and solutions, with and without
/// row interchanges and zeros inside the band.
#[test]
fn band_kernels_match_generic_loops_bit_for_bit() {
    let mut next = uniform(987654321u64);
    for &(n, kl, ku) in &[
        (1, 0, 0),
        (7, 1, 2),
        (30, 4, 4),
        (62, 5, 5),
        (40, 9, 3),
        (25, 2, 12),
    ] {
        for (diag, holes) in [(1e-3, false), (10.0, false), (1e-3, true), (10.0, true)] {
            let ld = 2 * kl + ku + 1;
            let kv = kl + ku;
            let mut ab = vec![0.0; ld * n];
            for j in 0..n {
                for i in j.saturating_sub(ku)..(j + kl + 1).min(n) {
                    let hole = holes && i != j && (i % 3 == 2 || j % 3 == 2);
                    if !hole {
                        ab[j * ld + kv + i - j] = if i == j { diag * next() } else { next() };
                    }
                }
            }
            let b: Vec<f64> = (0..n).map(|_| next()).collect();
            let (mut ab2, mut x, mut x2) = (ab.clone(), b.clone(), b);
            let (mut ipiv, mut ipiv2) = (vec![0; n], vec![0; n]);
            let (mut counts, mut counts2) = (vec![0; 2 * n], vec![0; 2 * n]);
            assert!(band_factor(&mut ab, &mut ipiv, &mut counts, n, kl, ku));
            assert!(band_factor_generic(
                &mut ab2,
                &mut ipiv2,
                &mut counts2,
                n,
                kl,
                ku
            ));
            band_solve(&ab, &ipiv, &counts, n, kl, ku, &mut x);
            band_solve_generic(&ab2, &ipiv2, &counts2, n, kl, ku, &mut x2);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(ipiv, ipiv2, "n {n} kl {kl} ku {ku}");
            assert_eq!(counts, counts2, "n {n} kl {kl} ku {ku}");
            assert_eq!(bits(&ab), bits(&ab2), "n {n} kl {kl} ku {ku}");
            assert_eq!(bits(&x), bits(&x2), "n {n} kl {kl} ku {ku}");
        }
    }
}

/// The band LU solves A x = b: for band matrices whose pivots need row interchanges
/// (small diagonals), x is recovered and the residual ‖A x − b‖∞ / (‖A‖∞‖x‖∞) is at
/// round-off. Truth: b = A·x_true, computed from the full matrix.
#[test]
fn band_lu_solves_band_systems() {
    // `holes`: every third state couples to nothing but itself (a chamber volume without a
    // piston): exact zeros inside the band, which the factors' extents skip.
    for &(n, kl, ku, holes) in &[
        (1, 0, 0, false),
        (7, 1, 2, false),
        (12, 3, 1, false),
        (30, 4, 4, false),
        (9, 8, 8, false),
        (62, 4, 5, true),
        (20, 2, 6, true),
    ] {
        let ld = 2 * kl + ku + 1;
        let kv = kl + ku;
        // Deterministic entries in the band, diagonal small so that pivoting happens.
        let mut full = vec![vec![0.0; n]; n];
        let mut next = uniform(12345u64);
        for (i, row) in full.iter_mut().enumerate() {
            for (j, a) in row.iter_mut().enumerate() {
                let hole = holes && i != j && (i % 3 == 2 || j % 3 == 2);
                if i <= j + kl && j <= i + ku && !hole {
                    *a = if i == j { 1e-3 * next() } else { next() };
                }
            }
        }
        let mut ab = vec![0.0; ld * n];
        for (i, row) in full.iter().enumerate() {
            for (j, &a) in row.iter().enumerate() {
                if i <= j + kl && j <= i + ku {
                    ab[j * ld + kv + i - j] = a;
                }
            }
        }
        let x_true: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / 3.0).collect();
        let b: Vec<f64> = full
            .iter()
            .map(|row| row.iter().zip(&x_true).map(|(a, x)| a * x).sum())
            .collect();
        let mut ipiv = vec![0; n];
        let mut counts = vec![0; 2 * n];
        assert!(
            band_factor(&mut ab, &mut ipiv, &mut counts, n, kl, ku),
            "n {n}: singular"
        );
        let swaps = ipiv.iter().enumerate().filter(|(j, p)| *j != **p).count();
        let mut x = b.clone();
        band_solve(&ab, &ipiv, &counts, n, kl, ku, &mut x);
        let norm_a = full
            .iter()
            .map(|r| r.iter().map(|a| a.abs()).sum::<f64>())
            .fold(0.0, f64::max);
        let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let resid = full
            .iter()
            .zip(&b)
            .map(|(row, bi)| (row.iter().zip(&x).map(|(a, x)| a * x).sum::<f64>() - bi).abs())
            .fold(0.0, f64::max);
        let rel = resid / (norm_a * norm_x);
        let err = x
            .iter()
            .zip(&x_true)
            .map(|(a, b)| (a - b).abs() / b)
            .fold(0.0, f64::max);
        let skipped: usize = (0..n)
            .map(|j| (kl.min(n - 1 - j) - counts[j]) + ((kl + ku).min(j) - counts[n + j]))
            .sum();
        println!(
            "n {n}, kl {kl}, ku {ku}, holes {holes}: {swaps} row swaps, {skipped} zero \
             entries of the factors skipped, relative residual {rel:.2e}, max relative error \
             in x {err:.2e}"
        );
        assert!(rel < 1e-14, "residual {rel:e}");
        assert!(err < 1e-9, "error {err:e}");
    }
    // A zero pivot column is reported, not divided by.
    let (n, kl, ku) = (3, 1, 1);
    let mut ab = vec![0.0; (2 * kl + ku + 1) * n];
    let mut ipiv = vec![0; n];
    let mut counts = vec![0; 2 * n];
    assert!(!band_factor(&mut ab, &mut ipiv, &mut counts, n, kl, ku));
}
