//! Kernels of the sweeps over the Nordsieck array: the predictor (`cvPredict`) with its
//! increment, its undoing after a failed step (`cvRestore`), the corrector's update
//! (`cvCompleteStep`) and dense output's sum (`CVodeGetDky`). Each gives the bits of CVODE's
//! column passes (element by element, in blocks, or over the live states only).

use super::MAX_ORDER;
use super::newton_passes::Live;

/// Elements per block of the Nordsieck sweeps (`predict_with_increment`, `complete_step`): the
/// q + 1 columns' slices of one block (≤ 6 × 4 KiB) stay in L1 while every column pass runs
/// over them, so the array is read and written once per sweep instead of once per pass: on
/// large systems the array does not fit in the caches.
pub(super) const NORDSIECK_BLOCK: usize = 512;

/// Nordsieck columns j − 1 (mutable) and j of `zn` (n values each), for the Pascal-triangle
/// sums of `predict` and `restore` without per-element bounds checks.
#[inline]
pub(super) fn column_pair(zn: &mut [f64], n: usize, j: usize) -> (&mut [f64], &[f64]) {
    let (lo, hi) = zn.split_at_mut(j * n);
    (&mut lo[(j - 1) * n..], &hi[..n])
}

/// inc = Σ_{j=1..q} z_j, then CVODE's predictor (cvPredict: z_{j−1} += z_j for k = 1..=q, j = q
/// down to k) on the q + 1 columns of `zn`, block by block; over the `live` states only when
/// given (the others' z_j, j ≥ 1, and inc are 0), two states at a time (`Live`).
pub(super) fn predict_blocked(
    zn: &mut [f64],
    inc: &mut [f64],
    n: usize,
    q: usize,
    live: Option<&Live>,
) {
    if let Some(live) = live {
        match q {
            1 => return predict_live::<1, 2>(zn, inc, n, live),
            2 => return predict_live::<2, 3>(zn, inc, n, live),
            3 => return predict_live::<3, 4>(zn, inc, n, live),
            4 => return predict_live::<4, 5>(zn, inc, n, live),
            5 => return predict_live::<5, 6>(zn, inc, n, live),
            _ => {}
        }
    }
    if n <= NORDSIECK_BLOCK {
        // One block: element by element with the order a constant (see `predict_small`).
        match q {
            1 => return predict_small::<1, 2>(zn, inc, n),
            2 => return predict_small::<2, 3>(zn, inc, n),
            3 => return predict_small::<3, 4>(zn, inc, n),
            4 => return predict_small::<4, 5>(zn, inc, n),
            5 => return predict_small::<5, 6>(zn, inc, n),
            _ => {}
        }
    }
    let mut lo = 0;
    while lo < n {
        let hi = (lo + NORDSIECK_BLOCK).min(n);
        let inc = &mut inc[lo..hi];
        inc.fill(0.0);
        for j in 1..=q {
            for (a, b) in inc.iter_mut().zip(&zn[j * n + lo..j * n + hi]) {
                *a += *b;
            }
        }
        for k in 1..=q {
            for j in (k..=q).rev() {
                let (prev, next) = column_pair(zn, n, j);
                for (a, b) in prev[lo..hi].iter_mut().zip(&next[lo..hi]) {
                    *a += *b;
                }
            }
        }
        lo = hi;
    }
}

/// `predict_blocked` for n ≤ one block and order Q, element by element: each element's Q + 1
/// Nordsieck values are loaded once, summed and run through the Pascal triangle in registers
/// (the same additions in the same order, so the same bits). On small networks the column
/// passes would spend most of their time in the q(q + 1)/2 passes' own loop set-up.
fn predict_small<const Q: usize, const K: usize>(zn: &mut [f64], inc: &mut [f64], n: usize) {
    const { assert!(K == Q + 1) };
    let mut cols = columns_mut::<K>(zn, n);
    let inc = &mut inc[..n];
    // Two states at a time (one SSE2 operation per pair of values, as `predict_live`'s
    // pairs), the last one of an odd n alone.
    let mut i = 0;
    while i + 2 <= n {
        predict_two::<Q, K>(&mut cols, inc, i);
        i += 2;
    }
    if i < n {
        predict_one::<Q, K>(&mut cols, inc, i);
    }
}

/// The predictor of one state i (`predict_small`'s element): its Q + 1 Nordsieck values loaded
/// once, summed into inc[i] and run through the Pascal triangle in registers.
#[inline(always)]
fn predict_one<const Q: usize, const K: usize>(
    cols: &mut [&mut [f64]; K],
    inc: &mut [f64],
    i: usize,
) {
    let mut z = [0.0; MAX_ORDER + 1];
    for (v, col) in z.iter_mut().zip(cols.iter()) {
        *v = col[i];
    }
    let mut sum = 0.0;
    for v in &z[1..Q + 1] {
        sum += *v;
    }
    inc[i] = sum;
    // Half-open constant ranges (not `(k..=Q).rev()`), which the compiler unrolls with z in
    // registers.
    for k in 1..Q + 1 {
        for jj in 0..Q + 1 - k {
            let j = Q - jj;
            z[j - 1] += z[j];
        }
    }
    // z_Q is unchanged by the predictor.
    for (col, v) in cols.iter_mut().zip(&z).take(Q) {
        col[i] = *v;
    }
}

/// `predict_small` over the `live` states only, two at a time (`Live`): per state the same
/// operations in the same order, so the same bits.
fn predict_live<const Q: usize, const K: usize>(
    zn: &mut [f64],
    inc: &mut [f64],
    n: usize,
    live: &Live,
) {
    const { assert!(K == Q + 1) };
    let mut cols = columns_mut::<K>(zn, n);
    let inc = &mut inc[..n];
    for &p in &live.pairs {
        predict_two::<Q, K>(&mut cols, inc, p);
    }
    for &i in &live.singles {
        predict_one::<Q, K>(&mut cols, inc, i);
    }
}

/// `predict_one` for the states p and p + 1 together: per state the same operations in the
/// same order (the same bits), each pair of values one SSE2 operation.
#[inline(always)]
fn predict_two<const Q: usize, const K: usize>(
    cols: &mut [&mut [f64]; K],
    inc: &mut [f64],
    p: usize,
) {
    // Slices of exactly two: no bounds checks per value, and one SSE2 operation each.
    let mut z = [[0.0; 2]; MAX_ORDER + 1];
    for (v, col) in z.iter_mut().zip(cols.iter()) {
        *v = pair(&col[p..p + 2]);
    }
    let mut sum = [0.0; 2];
    for v in &z[1..Q + 1] {
        sum[0] += v[0];
        sum[1] += v[1];
    }
    inc[p..p + 2].copy_from_slice(&sum);
    for k in 1..Q + 1 {
        for jj in 0..Q + 1 - k {
            let j = Q - jj;
            z[j - 1][0] += z[j][0];
            z[j - 1][1] += z[j][1];
        }
    }
    for (col, v) in cols.iter_mut().zip(&z).take(Q) {
        col[p..p + 2].copy_from_slice(v);
    }
}

/// `Step::restore`'s undoing of the predictor (z_{j−1} −= z_j for k = 1..=Q, j = Q down to k)
/// for n ≤ one block, element by element and two states at a time: per element the same
/// subtractions in the same order as the column passes, so the same bits.
pub(super) fn restore_small<const Q: usize, const K: usize>(zn: &mut [f64], n: usize) {
    const { assert!(K == Q + 1) };
    let mut cols = columns_mut::<K>(zn, n);
    let mut i = 0;
    while i + 2 <= n {
        let mut z = [[0.0; 2]; MAX_ORDER + 1];
        for (v, col) in z.iter_mut().zip(cols.iter()) {
            *v = pair(&col[i..i + 2]);
        }
        for k in 1..Q + 1 {
            for jj in 0..Q + 1 - k {
                let j = Q - jj;
                z[j - 1][0] -= z[j][0];
                z[j - 1][1] -= z[j][1];
            }
        }
        for (col, v) in cols.iter_mut().zip(&z).take(Q) {
            col[i..i + 2].copy_from_slice(v);
        }
        i += 2;
    }
    if i < n {
        let mut z = [0.0; MAX_ORDER + 1];
        for (v, col) in z.iter_mut().zip(cols.iter()) {
            *v = col[i];
        }
        for k in 1..Q + 1 {
            for jj in 0..Q + 1 - k {
                let j = Q - jj;
                z[j - 1] -= z[j];
            }
        }
        for (col, v) in cols.iter_mut().zip(&z).take(Q) {
            col[i] = *v;
        }
    }
}

/// Two values as an array (`Live`'s pairs; the slice has length 2).
#[inline(always)]
fn pair(v: &[f64]) -> [f64; 2] {
    [v[0], v[1]]
}

/// Dense output's increment inc = last + Σ_{j=1..Q} z_j·σ^j (`z` from column 1, σ^j formed here)
/// element by element: per element the same additions in the same order as the column passes
/// (inc = last, then += z_j·σ^j for j = 1..Q), so the same bits, in one sweep.
pub(super) fn dense_sum<const Q: usize>(
    z: &[f64],
    sigma: f64,
    last: &[f64],
    inc: &mut [f64],
    n: usize,
) {
    // σ^j, each the product of the one before and σ (the order a constant: no loop).
    let mut pw = [0.0; MAX_ORDER + 1];
    let mut p = 1.0;
    for v in &mut pw[1..Q + 1] {
        p *= sigma;
        *v = p;
    }
    let mut rest = z;
    let cols: [&[f64]; Q] = std::array::from_fn(|_| {
        let (col, r) = rest.split_at(n);
        rest = r;
        col
    });
    let (inc, last) = (&mut inc[..n], &last[..n]);
    // Two states at a time (each pair of values one SSE2 operation), the last one of an odd
    // n alone.
    let mut i = 0;
    while i + 2 <= n {
        let mut acc = pair(&last[i..i + 2]);
        for (col, &p) in cols.iter().zip(&pw[1..]) {
            let z = pair(&col[i..i + 2]);
            acc[0] += z[0] * p;
            acc[1] += z[1] * p;
        }
        inc[i..i + 2].copy_from_slice(&acc);
        i += 2;
    }
    if i < n {
        let mut acc = last[i];
        for (col, &p) in cols.iter().zip(&pw[1..]) {
            acc += col[i] * p;
        }
        inc[i] = acc;
    }
}

/// The first K columns (n values each) of a Nordsieck array, as K slices: the element-wise
/// sweeps index each by i < n, without the multiplication and bounds check per value of
/// `zn[j·n + i]`.
#[inline(always)]
fn columns_mut<const K: usize>(zn: &mut [f64], n: usize) -> [&mut [f64]; K] {
    let mut rest = zn;
    std::array::from_fn(|_| {
        let (col, r) = std::mem::take(&mut rest).split_at_mut(n);
        rest = r;
        col
    })
}

/// `correct_blocked` for n ≤ one block and order Q, element by element (same operations, same
/// order, same bits).
fn correct_small<const K: usize>(
    zn: &mut [f64],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    n: usize,
) {
    let mut cols = columns_mut::<K>(zn, n);
    let (inc, acor) = (&mut inc[..n], &acor[..n]);
    // Two states at a time (`correct_live`'s pairs), the last one of an odd n alone.
    let mut i = 0;
    while i + 2 <= n {
        correct_two(&mut cols, l, acor, inc, i);
        i += 2;
    }
    if i < n {
        correct_one(&mut cols, l, acor, inc, i);
    }
}

/// The corrector of state i (`correct_small`'s element).
#[inline(always)]
fn correct_one<const K: usize>(
    cols: &mut [&mut [f64]; K],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    i: usize,
) {
    let c = acor[i];
    for (col, &lj) in cols.iter_mut().zip(l) {
        col[i] += lj * c;
    }
    inc[i] += c;
}

/// The corrector of the states p and p + 1 together: per state the same operations (the same
/// bits), each pair of values one SSE2 operation.
#[inline(always)]
fn correct_two<const K: usize>(
    cols: &mut [&mut [f64]; K],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    p: usize,
) {
    let c = pair(&acor[p..p + 2]);
    for (col, &lj) in cols.iter_mut().zip(l) {
        let z = &mut col[p..p + 2];
        z[0] += lj * c[0];
        z[1] += lj * c[1];
    }
    let v = &mut inc[p..p + 2];
    v[0] += c[0];
    v[1] += c[1];
}

/// `correct_small` over the `live` states only, two at a time (`Live`): the same bits.
fn correct_live<const K: usize>(
    zn: &mut [f64],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    n: usize,
    live: &Live,
) {
    let mut cols = columns_mut::<K>(zn, n);
    let (inc, acor) = (&mut inc[..n], &acor[..n]);
    for &p in &live.pairs {
        correct_two(&mut cols, l, acor, inc, p);
    }
    for &i in &live.singles {
        correct_one(&mut cols, l, acor, inc, i);
    }
}

/// The corrector's update of the Nordsieck array (cvCompleteStep: z_j += ℓ_j·acor for
/// j = 0..=q) and inc += acor, block by block; over the `live` states only when given (the
/// others' acor is 0), two states at a time (`Live`).
pub(super) fn correct_blocked(
    zn: &mut [f64],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    n: usize,
    q: usize,
    live: Option<&Live>,
) {
    if let Some(live) = live {
        match q {
            1 => return correct_live::<2>(zn, l, acor, inc, n, live),
            2 => return correct_live::<3>(zn, l, acor, inc, n, live),
            3 => return correct_live::<4>(zn, l, acor, inc, n, live),
            4 => return correct_live::<5>(zn, l, acor, inc, n, live),
            5 => return correct_live::<6>(zn, l, acor, inc, n, live),
            _ => {}
        }
    }
    if n <= NORDSIECK_BLOCK {
        match q {
            1 => return correct_small::<2>(zn, l, acor, inc, n),
            2 => return correct_small::<3>(zn, l, acor, inc, n),
            3 => return correct_small::<4>(zn, l, acor, inc, n),
            4 => return correct_small::<5>(zn, l, acor, inc, n),
            5 => return correct_small::<6>(zn, l, acor, inc, n),
            _ => {}
        }
    }
    let mut lo = 0;
    while lo < n {
        let hi = (lo + NORDSIECK_BLOCK).min(n);
        let acor = &acor[lo..hi];
        for (j, &lj) in l.iter().enumerate().take(q + 1) {
            for (a, &c) in zn[j * n + lo..j * n + hi].iter_mut().zip(acor) {
                *a += lj * c;
            }
        }
        for (a, &c) in inc[lo..hi].iter_mut().zip(acor) {
            *a += c;
        }
        lo = hi;
    }
}
