//! Band LU with partial pivoting for the BDF's iteration matrix M = I − γJ (LAPACK's band
//! storage and `dgbtf2`/`dgbtrs` order of operations).
//!
//! M's band is filled through a map built once per pattern (`FillMap`, `band_fill_mapped`;
//! `band_fill`, the column-by-column fill, is the tests' reference for its bits).
//!
//! `band_fill`, `band_factor` and `band_solve` take the band's widths at run time and dispatch
//! to kernels monomorphized on them for the widths `Auto` meets on chains (kl = ku ≤
//! `SPECIALISED_MAX`: the 20-tank chain's own order is 5/5, the scale bench's chains in reverse
//! Cuthill–McKee order 7/7), else to the generic kernels (`factor_any`, `solve_any`). Both
//! perform the same floating-point operations in the same order, so they give the same bits:
//! with the widths constants the columns are fixed-size arrays, their index arithmetic folds
//! and most bounds checks go (on the 20-tank chain 34.6k → 14.8k instructions per
//! factorization, 5.1k → 3.85k per solve: callgrind, docs/performance.md, "The chain's BDF
//! step").

use crate::sparsity::Pattern;

/// Widths kl = ku = 1..=SPECIALISED_MAX have their own kernels: every symmetric band `Auto`
/// takes (kl + ku ≤ `BAND_MAX`).
pub(super) const SPECIALISED_MAX: usize = 8;
const _: () = assert!(2 * SPECIALISED_MAX == super::bdf::BAND_MAX);

/// Dispatch on (kl, ku) to a kernel monomorphized on (KL, KU, LD = 2KL + KU + 1), else the
/// generic one.
macro_rules! by_width {
    ($kl:expr, $ku:expr, $k:ident::<..>($($arg:expr),*), $generic:expr) => {
        match ($kl, $ku) {
            (1, 1) => $k::<1, 1, 4>($($arg),*),
            (2, 2) => $k::<2, 2, 7>($($arg),*),
            (3, 3) => $k::<3, 3, 10>($($arg),*),
            (4, 4) => $k::<4, 4, 13>($($arg),*),
            (5, 5) => $k::<5, 5, 16>($($arg),*),
            (6, 6) => $k::<6, 6, 19>($($arg),*),
            (7, 7) => $k::<7, 7, 22>($($arg),*),
            (8, 8) => $k::<8, 8, 25>($($arg),*),
            _ => $generic,
        }
    };
}

/// M = I − γJ (J's values `jac` over M's pattern `p`) into the band storage `ab` (ld = 2kl +
/// ku + 1 values per column), every column zeroed first, column by column: the reference of
/// `band_fill_mapped` (the BDF's fill), which gives its bits. `pos` empty: the states' own order;
/// else entry (i, j) goes to band position (pos[i], pos[j]).
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(super) fn band_fill(
    ab: &mut [f64],
    n: usize,
    kl: usize,
    ku: usize,
    p: &Pattern,
    jac: &[f64],
    gamma: f64,
    pos: &[usize],
) {
    by_width!(
        kl,
        ku,
        fill_k::<..>(ab, n, p, jac, gamma, pos),
        fill_any(ab, n, kl, ku, p, jac, gamma, pos)
    )
}

#[cfg(test)]
#[allow(clippy::too_many_arguments)]
fn fill_any(
    ab: &mut [f64],
    n: usize,
    kl: usize,
    ku: usize,
    p: &Pattern,
    jac: &[f64],
    gamma: f64,
    pos: &[usize],
) {
    let ld = 2 * kl + ku + 1;
    let kv = kl + ku;
    // Above 2 KiB (glibc's `rep stosb` threshold) each column is zeroed as it is filled
    // (every column once, in either order): one memset of the whole band is a `rep stosb`
    // that callgrind counts byte by byte (4 % of the 20-tank chain's instructions); below it
    // one memset is fewer instructions than n calls.
    let ab = &mut ab[..ld * n];
    let by_column = ab.len() >= 256;
    if !by_column {
        ab.fill(0.0);
    }
    for j in 0..n {
        let range = p.col_start[j]..p.col_start[j + 1];
        let pj = if pos.is_empty() { j } else { pos[j] };
        let col = &mut ab[pj * ld..(pj + 1) * ld];
        if by_column {
            col.fill(0.0);
        }
        for (&i, a) in p.rows[range.clone()].iter().zip(&jac[range]) {
            let pi = if pos.is_empty() { i } else { pos[i] };
            col[kv + pi - pj] = -gamma * a;
        }
        col[kv] += 1.0;
    }
}

/// `fill_any` with the widths constants: a column's zeroing is a few stores, not a `memset`.
#[cfg(test)]
fn fill_k<const KL: usize, const KU: usize, const LD: usize>(
    ab: &mut [f64],
    n: usize,
    p: &Pattern,
    jac: &[f64],
    gamma: f64,
    pos: &[usize],
) {
    const { assert!(LD == 2 * KL + KU + 1) };
    let kv = KL + KU;
    let ab = &mut ab[..LD * n];
    if pos.is_empty() {
        for (j, col) in ab.chunks_exact_mut(LD).enumerate() {
            let col = arr_mut::<LD>(col);
            *col = [0.0; LD];
            let range = p.col_start[j]..p.col_start[j + 1];
            for (&i, a) in p.rows[range.clone()].iter().zip(&jac[range]) {
                col[kv + i - j] = -gamma * a;
            }
            col[kv] += 1.0;
        }
    } else {
        for (j, &pj) in pos[..n].iter().enumerate() {
            let col = arr_mut::<LD>(&mut ab[pj * LD..(pj + 1) * LD]);
            *col = [0.0; LD];
            let range = p.col_start[j]..p.col_start[j + 1];
            for (&i, a) in p.rows[range.clone()].iter().zip(&jac[range]) {
                col[kv + pos[i] - pj] = -gamma * a;
            }
            col[kv] += 1.0;
        }
    }
}

/// Where `band_fill` puts each of M's entries, for `band_fill_mapped`: per band column the
/// position of its diagonal in J's values, and per off-diagonal entry of `p` (position in the
/// band storage, position in J's values). J's value of p's entry k is `jac[k]`, or
/// `jac[src[k]]` when `src` is not empty; `pos` as in `band_fill`. `p` holds every diagonal
/// (M's pattern). Built once per pattern.
pub(super) struct FillMap {
    diag: Vec<usize>,
    off: Vec<(usize, usize)>,
}

impl FillMap {
    pub(super) fn new(p: &Pattern, kl: usize, ku: usize, src: &[usize], pos: &[usize]) -> FillMap {
        let (ld, kv) = (2 * kl + ku + 1, kl + ku);
        let at = |i: usize| if pos.is_empty() { i } else { pos[i] };
        let mut map = FillMap {
            diag: vec![usize::MAX; p.n],
            off: Vec::with_capacity(p.rows.len()),
        };
        for j in 0..p.n {
            for k in p.col_start[j]..p.col_start[j + 1] {
                let (i, pj) = (p.rows[k], at(j));
                let s = if src.is_empty() { k } else { src[k] };
                if i == j {
                    map.diag[pj] = s;
                } else {
                    map.off.push((pj * ld + kv + at(i) - pj, s));
                }
            }
        }
        assert!(
            map.diag.iter().all(|&s| s != usize::MAX),
            "M's pattern without its diagonal"
        );
        map
    }
}

/// `band_fill` through its `FillMap`: column by column zeroed and its diagonal set to
/// −γ·J_jj + 1, then each off-diagonal −γ·J written where the map says. Each band position is
/// written once, with `band_fill`'s operations, so the same bits, with one indexed store per
/// entry instead of the pattern's row arithmetic (on the 20-tank chain 4.1k → 3.1k
/// instructions a fill, J's gather into the coupled block's order, 1.2k, no longer needed).
pub(super) fn band_fill_mapped(
    ab: &mut [f64],
    n: usize,
    kl: usize,
    ku: usize,
    map: &FillMap,
    jac: &[f64],
    gamma: f64,
) {
    let ab = &mut ab[..(2 * kl + ku + 1) * n];
    by_width!(
        kl,
        ku,
        diag_k::<..>(ab, &map.diag, jac, gamma),
        diag_any(ab, kl, ku, &map.diag, jac, gamma)
    );
    for &(d, s) in &map.off {
        ab[d] = -gamma * jac[s];
    }
}

/// Each column zeroed (a few stores, not a `memset`: the diagonal's store in the same loop
/// keeps it from becoming one, whose `rep stosb` callgrind counts byte by byte) and its
/// diagonal set.
fn diag_k<const KL: usize, const KU: usize, const LD: usize>(
    ab: &mut [f64],
    diag: &[usize],
    jac: &[f64],
    gamma: f64,
) {
    for (col, &s) in ab.chunks_exact_mut(LD).zip(diag) {
        let col = arr_mut::<LD>(col);
        *col = [0.0; LD];
        col[KL + KU] = -gamma * jac[s] + 1.0;
    }
}

fn diag_any(ab: &mut [f64], kl: usize, ku: usize, diag: &[usize], jac: &[f64], gamma: f64) {
    for (col, &s) in ab.chunks_exact_mut(2 * kl + ku + 1).zip(diag) {
        col.fill(0.0);
        col[kl + ku] = -gamma * jac[s] + 1.0;
    }
}

/// A column of the band storage as an array of its LD values (a `chunks_exact(LD)` chunk or
/// an LD-long range: the conversion cannot fail and compiles to nothing).
#[inline(always)]
fn arr<const LD: usize>(col: &[f64]) -> &[f64; LD] {
    let Ok(col) = col.try_into() else {
        unreachable!("a band column of {} values, not {LD}", col.len())
    };
    col
}

#[inline(always)]
fn arr_mut<const LD: usize>(col: &mut [f64]) -> &mut [f64; LD] {
    let len = col.len();
    let Ok(col) = col.try_into() else {
        unreachable!("a band column of {len} values, not {LD}")
    };
    col
}

/// LU with partial pivoting of the n×n band matrix in `ab` (LAPACK band storage: A(i, j) at
/// `ab[j·ld + kv + i − j]`, ld = 2kl + ku + 1, kv = kl + ku; the top kl rows hold the fill of
/// U), in place, as LAPACK's unblocked `dgbtf2`: U gets upper bandwidth kl + ku, the
/// multipliers of L stay below the diagonal, `ipiv[j]` is the row swapped with row j. False
/// when a pivot is zero or not finite (M singular).
///
/// `counts` (2n) records the extent of each column's nonzeros, for `band_solve` and the
/// rank-1 updates here: `counts[j]` multipliers of column j of L (trailing exact zeros
/// dropped), `counts[n + j]` entries of column j of U above the diagonal (leading exact zeros
/// dropped). A chain's M has whole zero rows and columns inside its band (volumes without
/// pistons), and without interchanges U keeps bandwidth ku, not kl + ku: skipping exact zeros
/// performs the same operations on every other entry, in the same order.
pub(super) fn band_factor(
    ab: &mut [f64],
    ipiv: &mut [usize],
    counts: &mut [usize],
    n: usize,
    kl: usize,
    ku: usize,
) -> bool {
    by_width!(
        kl,
        ku,
        factor_k::<..>(ab, ipiv, counts, n),
        factor_any(ab, ipiv, counts, n, kl, ku)
    )
}

/// Solve A x = b in place with the factors of [`band_factor`] (LAPACK's `dgbtrs`, no transpose).
pub(super) fn band_solve(
    ab: &[f64],
    ipiv: &[usize],
    counts: &[usize],
    n: usize,
    kl: usize,
    ku: usize,
    b: &mut [f64],
) {
    by_width!(
        kl,
        ku,
        solve_k::<..>(ab, ipiv, counts, n, b),
        solve_any(ab, ipiv, counts, n, kl, ku, b)
    )
}

/// `band_factor` for any widths.
fn factor_any(
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
    let ab = &mut ab[..ld * n];
    let (lcount, ucount) = counts[..2 * n].split_at_mut(n);
    // Last column touched by the row operations so far.
    let mut ju = 0;
    for (j, (piv, lc)) in ipiv[..n].iter_mut().zip(lcount.iter_mut()).enumerate() {
        let km = kl.min(n - 1 - j);
        let (left, right) = ab.split_at_mut((j + 1) * ld);
        let colj = &mut left[j * ld + kv..j * ld + kv + km + 1];
        let mut jp = 0;
        let mut big = colj[0].abs();
        for (r, v) in colj.iter().enumerate().skip(1) {
            if v.abs() > big {
                big = v.abs();
                jp = r;
            }
        }
        *piv = j + jp;
        let pivot = colj[jp];
        if pivot == 0.0 || !pivot.is_finite() {
            return false;
        }
        ju = ju.max((j + ku + jp).min(n - 1));
        if jp != 0 {
            // Swap rows j and j + jp in columns j..=ju.
            colj.swap(0, jp);
            for c in j + 1..=ju {
                let k = (c - j - 1) * ld;
                right.swap(k + kv + j - c, k + kv + j + jp - c);
            }
        }
        let mut lm = km;
        if km > 0 {
            let inv = 1.0 / colj[0];
            let mult = &mut colj[1..];
            for v in mult.iter_mut() {
                *v *= inv;
            }
            while lm > 0 && mult[lm - 1] == 0.0 {
                lm -= 1;
            }
        }
        *lc = lm;
        if lm > 0 {
            // Rank-1 update of the trailing band: A(j+r, c) −= l(j+r)·u(j, c).
            let l = &colj[1..1 + lm];
            let cols = &mut right[..(ju - j) * ld];
            // One dispatch on the multipliers' count per column of L, not one per update.
            match lm {
                1 => rank1_update::<1>(cols, l, ld, kv),
                2 => rank1_update::<2>(cols, l, ld, kv),
                3 => rank1_update::<3>(cols, l, ld, kv),
                4 => rank1_update::<4>(cols, l, ld, kv),
                5 => rank1_update::<5>(cols, l, ld, kv),
                6 => rank1_update::<6>(cols, l, ld, kv),
                7 => rank1_update::<7>(cols, l, ld, kv),
                8 => rank1_update::<8>(cols, l, ld, kv),
                _ => {
                    for (k, colc) in cols.chunks_exact_mut(ld).enumerate() {
                        let top = kv - k - 1;
                        let u = colc[top];
                        if u != 0.0 {
                            sub_scaled(&mut colc[top + 1..top + 1 + lm], l, u);
                        }
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

/// `factor_any` with the widths constants (LD = 2KL + KU + 1): the same pivots, interchanges,
/// multipliers, rank-1 updates (skipping u(j, c) = 0) and extents, so the same bits.
fn factor_k<const KL: usize, const KU: usize, const LD: usize>(
    ab: &mut [f64],
    ipiv: &mut [usize],
    counts: &mut [usize],
    n: usize,
) -> bool {
    const { assert!(LD == 2 * KL + KU + 1) };
    let kv = KL + KU;
    let ab = &mut ab[..LD * n];
    let (lcount, ucount) = counts[..2 * n].split_at_mut(n);
    let ipiv = &mut ipiv[..n];
    // Last column touched by the row operations so far.
    let mut ju = 0;
    // Up to the last KL columns a column has KL entries under its diagonal: `column` inlined
    // with km = KL a constant, its loops of constant length unrolled.
    let interior = n.saturating_sub(KL);
    for j in 0..interior {
        if !column::<KL, KU, LD>(ab, n, j, KL, &mut ju, &mut ipiv[j], &mut lcount[j]) {
            return false;
        }
    }
    for j in interior..n {
        let km = n - 1 - j;
        if !column::<KL, KU, LD>(ab, n, j, km, &mut ju, &mut ipiv[j], &mut lcount[j]) {
            return false;
        }
    }
    // U's extents: leading exact zeros above each diagonal dropped. From column kv on the
    // scan has constant bounds (unrolled, it stops at the first nonzero: 2–3 entries down in
    // a factored chain's columns).
    #[inline(always)]
    fn above<const LD: usize>(col: &[f64; LD], kv: usize, mut top: usize) -> usize {
        while top < kv && col[top] == 0.0 {
            top += 1;
        }
        kv - top
    }
    let split = kv.min(n);
    for (j, (uc, colj)) in ucount[..split]
        .iter_mut()
        .zip(ab.chunks_exact(LD))
        .enumerate()
    {
        *uc = above(arr::<LD>(colj), kv, kv - j);
    }
    for (uc, colj) in ucount[split..]
        .iter_mut()
        .zip(ab[split * LD..].chunks_exact(LD))
    {
        *uc = above(arr::<LD>(colj), kv, 0);
    }
    true
}

/// Step j of `factor_k` (km = min(KL, n − 1 − j) entries under the diagonal): the pivot, the
/// interchanges in columns j..=ju, the multipliers and the rank-1 update. False when the pivot
/// is zero or not finite.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn column<const KL: usize, const KU: usize, const LD: usize>(
    ab: &mut [f64],
    n: usize,
    j: usize,
    km: usize,
    ju: &mut usize,
    piv: &mut usize,
    lc: &mut usize,
) -> bool {
    let kv = KL + KU;
    let (left, right) = ab.split_at_mut((j + 1) * LD);
    let colj = arr_mut::<LD>(&mut left[j * LD..]);
    let mut jp = 0;
    let mut big = colj[kv].abs();
    for r in 1..=km {
        let v = colj[kv + r].abs();
        if v > big {
            big = v;
            jp = r;
        }
    }
    if jp > KL {
        // jp ≤ km ≤ KL: tells the compiler, so the interchanges below need no index check.
        unreachable!()
    }
    *piv = j + jp;
    let pivot = colj[kv + jp];
    if pivot == 0.0 || !pivot.is_finite() {
        return false;
    }
    *ju = (*ju).max((j + KU + jp).min(n - 1));
    // Columns j + 1..=ju, with the row of u(j, c) in each (kv − 1 − (c − j − 1)).
    let trailing = &mut right[..(*ju - j) * LD];
    if jp != 0 {
        colj.swap(kv, kv + jp);
        for (colc, top) in trailing.chunks_exact_mut(LD).zip((0..kv).rev()) {
            arr_mut::<LD>(colc).swap(top, top + jp);
        }
    }
    if km == 0 {
        *lc = 0;
        return true;
    }
    let inv = 1.0 / colj[kv];
    for v in &mut colj[kv + 1..=kv + km] {
        *v *= inv;
    }
    // Trailing exact zeros of the multipliers dropped (a scan from the last: in a factored
    // chain's columns 1–3 steps; with km = KL constant, unrolled).
    let mut lm = km;
    while lm > 0 && colj[kv + lm] == 0.0 {
        lm -= 1;
    }
    *lc = lm;
    if lm > 0 {
        let l = &colj[kv + 1..kv + 1 + lm];
        macro_rules! update {
            ($($m:literal)*) => {
                match lm {
                    $($m => rank1_k::<$m, LD>(trailing, l, kv),)*
                    _ => {
                        for (colc, top) in trailing.chunks_exact_mut(LD).zip((0..kv).rev()) {
                            let u = colc[top];
                            if u != 0.0 {
                                sub_scaled(&mut colc[top + 1..top + 1 + lm], l, u);
                            }
                        }
                    }
                }
            };
        }
        update!(1 2 3 4 5 6 7 8);
    }
    true
}

/// The rank-1 update of `factor_k` with M multipliers `l`: in each column of `cols`, below
/// u(j, c) (row `top`), the M entries −= l·u(j, c), skipped when u(j, c) = 0.
#[inline(always)]
fn rank1_k<const M: usize, const LD: usize>(cols: &mut [f64], l: &[f64], kv: usize) {
    let Ok(l) = <&[f64; M]>::try_from(l) else {
        unreachable!("rank1_k::<{M}> with {} multipliers", l.len())
    };
    for (colc, top) in cols.chunks_exact_mut(LD).zip((0..kv).rev()) {
        let colc = arr_mut::<LD>(colc);
        let u = colc[top];
        if u != 0.0 {
            let Ok(a) = <&mut [f64; M]>::try_from(&mut colc[top + 1..top + 1 + M]) else {
                unreachable!()
            };
            for (a, &m) in a.iter_mut().zip(l) {
                *a -= m * u;
            }
        }
    }
}

/// a −= x·u element by element (a and x of one length). The band's columns are short (at most
/// kl multipliers, kl + ku entries of U), so a generic loop's set-up cost more than its work:
/// lengths up to 8 take a loop of constant length, unrolled, the same operations in the same
/// order (the same bits). (Up to 16 cost more instructions on the 20-tank chain.)
#[inline(always)]
fn sub_scaled(a: &mut [f64], x: &[f64], u: f64) {
    macro_rules! by_len {
        ($($k:literal)*) => {
            match a.len() {
                $($k => sub_scaled_n::<$k>(a, x, u),)*
                _ => {
                    for (a, &x) in a.iter_mut().zip(x) {
                        *a -= x * u;
                    }
                }
            }
        };
    }
    by_len!(1 2 3 4 5 6 7 8)
}

/// The rank-1 update of `factor_any` with M multipliers `l`: in each column c = j + 1 + k of
/// `cols`, the M entries below u(j, c) (k + 1 rows above c's diagonal) −= l·u(j, c).
/// `l` has exactly M values (the caller dispatches on its length); a mismatch is a bug in the
/// caller and panics rather than leaving the factor silently unupdated.
#[inline(always)]
fn rank1_update<const M: usize>(cols: &mut [f64], l: &[f64], ld: usize, kv: usize) {
    debug_assert_eq!(l.len(), M);
    let Ok(l) = <&[f64; M]>::try_from(l) else {
        unreachable!("rank1_update::<{M}> with {} multipliers", l.len())
    };
    for (k, colc) in cols.chunks_exact_mut(ld).enumerate() {
        let top = kv - k - 1;
        let u = colc[top];
        if u != 0.0 {
            // A range of constant length M: the conversion cannot fail.
            let Ok(a) = <&mut [f64; M]>::try_from(&mut colc[top + 1..top + 1 + M]) else {
                unreachable!()
            };
            for (a, &m) in a.iter_mut().zip(l) {
                *a -= m * u;
            }
        }
    }
}

/// `a` and `x` have exactly N values (`sub_scaled` dispatches on `a`'s length and the callers
/// pass slices of one length); a mismatch panics, never skips the update.
#[inline(always)]
fn sub_scaled_n<const N: usize>(a: &mut [f64], x: &[f64], u: f64) {
    debug_assert!(a.len() == N && x.len() == N);
    let (Ok(a), Ok(x)) = (<&mut [f64; N]>::try_from(a), <&[f64; N]>::try_from(x)) else {
        unreachable!("sub_scaled_n::<{N}> on slices of other lengths")
    };
    for (a, &x) in a.iter_mut().zip(x) {
        *a -= x * u;
    }
}

/// `band_solve` for any widths.
fn solve_any(
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
            sub_scaled(&mut rest[..lm], &col[kv + 1..kv + 1 + lm], bj);
        }
    }
    // U (upper bandwidth kv): back substitution by columns.
    for (j, (col, &um)) in ab.chunks_exact(ld).zip(ucount).enumerate().rev() {
        let (above, from_j) = b.split_at_mut(j);
        from_j[0] /= col[kv];
        let bj = from_j[0];
        let len = above.len();
        sub_scaled(&mut above[len - um..], &col[kv - um..kv], bj);
    }
}

/// `solve_any` with the widths constants: the same operations in the same order. Each column's
/// update dispatches once on its length (`counts`) to a loop of constant length.
fn solve_k<const KL: usize, const KU: usize, const LD: usize>(
    ab: &[f64],
    ipiv: &[usize],
    counts: &[usize],
    n: usize,
    b: &mut [f64],
) {
    const { assert!(LD == 2 * KL + KU + 1) };
    let kv = KL + KU;
    let ab = &ab[..LD * n];
    let b = &mut b[..n];
    let (lcount, ucount) = counts[..2 * n].split_at(n);
    // L: the row interchanges and the multipliers, column by column.
    for (j, ((col, &p), &lm)) in ab.chunks_exact(LD).zip(&ipiv[..n]).zip(lcount).enumerate() {
        let col = arr::<LD>(col);
        if p != j {
            b.swap(p, j);
        }
        let bj = b[j];
        if bj != 0.0 {
            macro_rules! lower {
                ($($m:literal)*) => {
                    match lm {
                        0 => {}
                        $($m => sub_n::<$m>(&mut b[j + 1..j + 1 + $m], &col[kv + 1..kv + 1 + $m], bj),)*
                        _ => sub_scaled(&mut b[j + 1..j + 1 + lm], &col[kv + 1..kv + 1 + lm], bj),
                    }
                };
            }
            lower!(1 2 3 4 5 6 7 8);
        }
    }
    // U (upper bandwidth kv): back substitution by columns.
    for (j, (col, &um)) in ab.chunks_exact(LD).zip(ucount).enumerate().rev() {
        let col = arr::<LD>(col);
        let bj = b[j] / col[kv];
        b[j] = bj;
        macro_rules! upper {
            ($($m:literal)*) => {
                match um {
                    0 => {}
                    $($m => sub_n::<$m>(&mut b[j - $m..j], &col[kv - $m..kv], bj),)*
                    _ => sub_scaled(&mut b[j - um..j], &col[kv - um..kv], bj),
                }
            };
        }
        upper!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    }
}

/// a −= x·u over N values (the caller's ranges have length N: the conversions cannot fail).
#[inline(always)]
fn sub_n<const N: usize>(a: &mut [f64], x: &[f64], u: f64) {
    let (Ok(a), Ok(x)) = (<&mut [f64; N]>::try_from(a), <&[f64; N]>::try_from(x)) else {
        unreachable!("sub_n::<{N}> on slices of other lengths")
    };
    for (a, &x) in a.iter_mut().zip(x) {
        *a -= x * u;
    }
}

#[cfg(test)]
mod tests {
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

    /// The band kernels of the previous commit (generic loops over the short columns), kept
    /// as the reference the unrolled ones must match bit for bit.
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
}
