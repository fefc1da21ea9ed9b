//! Band LU with partial pivoting for the BDF's iteration matrix M = I − γJ (LAPACK's band
//! storage and `dgbtf2`/`dgbtrs` order of operations).
//!
//! M's band is filled through a map built once per pattern (`FillMap`, `band_fill_mapped`;
//! `band_fill`, the column-by-column fill, is the tests' reference for its bits).
//!
//! `band_fill`, `band_factor` and `band_solve` take the band's widths at run time and dispatch
//! to kernels monomorphized on them for the widths `Auto` meets on chains (kl = ku ≤
//! `SPECIALISED_MAX`), else to the generic kernels (`factor_any`, `solve_any`). Both perform
//! the same floating-point operations in the same order, so they give the same bits: with the
//! widths constants the columns are fixed-size arrays, their index arithmetic folds and most
//! bounds checks go.

use crate::sparsity::Pattern;

/// `Auto` factors M as a band matrix from `SPARSE_MIN_STATES` states on when its lower plus
/// upper bandwidth is at most this (a chain of tanks: 5 + 5): the band LU does a factorization
/// in n·kl·(kl + ku) and a solve in n·(2kl + ku) multiply-adds with none of the sparse LU's
/// symbolic bookkeeping, which dominates on such narrow patterns.
pub const BAND_MAX: usize = 16;

/// Widths kl = ku = 1..=SPECIALISED_MAX have their own kernels: every symmetric band `Auto`
/// takes (kl + ku ≤ `BAND_MAX`).
pub(super) const SPECIALISED_MAX: usize = 8;
const _: () = assert!(2 * SPECIALISED_MAX == BAND_MAX);

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
    // (every column once, in either order), which keeps the band in cache as it is written;
    // below it one memset is cheaper than n calls.
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

/// Lower and upper bandwidths (kl, ku) of a pattern: the largest i − j and j − i of its entries.
pub(super) fn bandwidths(p: &Pattern) -> (usize, usize) {
    let (mut kl, mut ku) = (0, 0);
    for j in 0..p.n {
        for &i in &p.rows[p.col_start[j]..p.col_start[j + 1]] {
            kl = kl.max(i.saturating_sub(j));
            ku = ku.max(j.saturating_sub(i));
        }
    }
    (kl, ku)
}

/// The band LU of M = I − γJ (or of the coupled block of `Peel`) over a pattern of n states
/// with bandwidths kl, ku, filled from J's values through a `FillMap`, in the pattern's own
/// order or in a reordered numbering.
pub(crate) struct BandLu {
    n: usize,
    kl: usize,
    ku: usize,
    /// The factors in LAPACK band storage (2kl + ku + 1 rows per column, column-major), the
    /// row interchanges and the nonzero extents of the columns (see `band_factor`).
    ab: Vec<f64>,
    ipiv: Vec<usize>,
    counts: Vec<usize>,
    /// Where each of J's values (over M's pattern, through `Peel::src` for the coupled block)
    /// goes in `ab`.
    fill_map: FillMap,
    /// A reordered numbering (`reverse_cuthill_mckee`; empty: the pattern's own order): the
    /// state at each band position, and the right-hand side gathered into that order.
    perm: Vec<usize>,
    rhs: Vec<f64>,
}

impl BandLu {
    /// The storage for the pattern `p` with bandwidths (kl, ku) in the numbering `perm` (`pos`
    /// its inverse; both empty: the pattern's own order); J's value of p's entry k is `jac[k]`,
    /// or `jac[src[k]]` when `src` is not empty.
    pub(crate) fn new(
        p: &Pattern,
        (kl, ku): (usize, usize),
        src: &[usize],
        perm: Vec<usize>,
        pos: &[usize],
    ) -> BandLu {
        let n = p.n;
        BandLu {
            n,
            kl,
            ku,
            ab: vec![0.0; (2 * kl + ku + 1) * n],
            ipiv: vec![0; n],
            counts: vec![0; 2 * n],
            fill_map: FillMap::new(p, kl, ku, src, pos),
            rhs: if perm.is_empty() {
                Vec::new()
            } else {
                vec![0.0; n]
            },
            perm,
        }
    }

    /// Whether the band is in a reordered numbering.
    pub(crate) fn reordered(&self) -> bool {
        !self.perm.is_empty()
    }

    /// LU with partial pivoting of M = I − γJ (`jac`: J's values as `new`'s `src` says).
    /// False when M is singular.
    pub(crate) fn factor(&mut self, jac: &[f64], gamma: f64) -> bool {
        let (n, kl, ku) = (self.n, self.kl, self.ku);
        band_fill_mapped(&mut self.ab, n, kl, ku, &self.fill_map, jac, gamma);
        band_factor(&mut self.ab, &mut self.ipiv, &mut self.counts, n, kl, ku)
    }

    /// Solve M x = b in place with the factors of `factor`.
    pub(crate) fn solve(&mut self, b: &mut [f64]) {
        let (n, kl, ku) = (b.len(), self.kl, self.ku);
        if self.perm.is_empty() {
            band_solve(&self.ab, &self.ipiv, &self.counts, n, kl, ku, b);
            return;
        }
        // P M Pᵀ (P x) = P b: gather b into the band order, scatter x back.
        for (r, &i) in self.rhs.iter_mut().zip(&self.perm) {
            *r = b[i];
        }
        band_solve(&self.ab, &self.ipiv, &self.counts, n, kl, ku, &mut self.rhs);
        for (&r, &i) in self.rhs.iter().zip(&self.perm) {
            b[i] = r;
        }
    }
}

/// `band_fill` through its `FillMap`: column by column zeroed and its diagonal set to
/// −γ·J_jj + 1, then each off-diagonal −γ·J written where the map says. Each band position is
/// written once, with `band_fill`'s operations, so the same bits, with one indexed store per
/// entry instead of the pattern's row arithmetic (and no gather of J into the coupled block's
/// order).
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

/// Each column zeroed (a few stores, not a `memset` call: the diagonal's store in the same loop
/// keeps it from becoming one) and its diagonal set.
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
/// order (the same bits).
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
#[path = "band_tests.rs"]
mod tests;
