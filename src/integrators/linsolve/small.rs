//! The band LU of up to `SMALL_MAX` states on a fixed-size dense array, monomorphized on the
//! number of states, with the trailing quadratures solved from their rows and, optionally,
//! the constant states left out through a selection.

use crate::sparsity::Pattern;

/// Up to this many states the band LU (in the states' own order) runs on a fixed-size dense
/// array, monomorphized on n (`small_factor`, `small_solve`): at a handful of states the band
/// kernels' index arithmetic costs more than the arithmetic itself.
pub(crate) const SMALL_MAX: usize = 12;

/// `SmallLu::kind` of an LU through `SmallLu::sel` (added to its N; the dispatch in
/// `SmallLu::factor` and `SmallLu::solve` spells the sums out).
pub(crate) const SMALL_SEL: usize = 13;
const _: () = assert!(SMALL_SEL == SMALL_MAX + 1);

/// The small LU over a selection of the states (`SmallLu::sel`): the constant states (an empty
/// row of J: f_i ≡ 0, and a correction that stays exactly 0, see `Peel`) are left out, and so
/// are their columns (their x is 0). The LU's position k holds state `state[k]` (increasing),
/// the tail the last states from `tail_start` on (as `SmallLu::tail`); `row[i]` is state i's
/// row of M in `SmallLu::a` (its LU position, or N + q for the tail's q-th state).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SmallSel {
    pub(crate) state: [usize; SMALL_MAX],
    pub(crate) row: [usize; SMALL_MAX],
    pub(crate) tail_start: usize,
}

/// The band LU in the states' own order for up to `SMALL_MAX` states, in a fixed-size dense
/// array (`small_factor`), column-major, with its row interchanges.
pub(crate) struct SmallLu {
    a: [[f64; SMALL_MAX]; SMALL_MAX],
    piv: [usize; SMALL_MAX],
    /// The last `tail` states have an empty column off the diagonal (the quadratures:
    /// accumulators, swept volumes), so M is [M_CC 0; M_TC D_T]: the LU runs over the leading
    /// n − tail states and each tail state follows from its row (`small_tail`). Their rows stay
    /// in `a` below the LU's (`small_lu` writes them, the elimination never reaches them),
    /// their diagonals M_qq in `tail_d`. The general `Peel` does the same through gathers and
    /// index lists, which on small systems cost more than the smaller LU saves.
    pub(crate) tail: usize,
    tail_d: [f64; SMALL_MAX],
    /// Which LU it runs: N = n − tail states in their own order, or `SMALL_SEL` + N with the
    /// constant states left out (`sel`).
    pub(crate) kind: usize,
    /// Without a `Peel`, when the system has constant states with an empty row (a closed
    /// chamber's mass, a fixed volume): the LU runs over the N others before the tail only,
    /// through this map (the general `Peel` costs more than it saves here).
    sel: SmallSel,
}

impl SmallLu {
    /// The LU of the matrix over the pattern `p` (`p.n` ≤ `SMALL_MAX`, at least 1). Without a
    /// `Peel` around it (`peeled` false) its trailing states whose column holds only the
    /// diagonal leave the LU (at least one state left to it), and so do the constant states
    /// before them (`constant[i]`, an empty row) when any state is left: those are returned.
    pub(crate) fn new(p: &Pattern, peeled: bool, constant: &[bool]) -> (SmallLu, Vec<usize>) {
        let nf = p.n;
        let mut lu = SmallLu {
            a: [[0.0; SMALL_MAX]; SMALL_MAX],
            piv: [0; SMALL_MAX],
            tail: 0,
            tail_d: [0.0; SMALL_MAX],
            kind: nf,
            sel: SmallSel::default(),
        };
        if peeled {
            return (lu, Vec::new());
        }
        let t = (0..nf).rev().take_while(|&q| p.column(q) == [q]).count();
        lu.tail = t.min(nf - 1);
        let head = nf - lu.tail;
        lu.kind = head;
        // The constant states before the tail left out of the LU (`SmallSel`), when any state
        // is left to it: a closed chamber's mass and a fixed volume.
        let kept: Vec<usize> = (0..head).filter(|&i| !constant[i]).collect();
        if kept.is_empty() || kept.len() == head {
            return (lu, Vec::new());
        }
        lu.sel.tail_start = head;
        for (k, &i) in kept.iter().enumerate() {
            lu.sel.state[k] = i;
            lu.sel.row[i] = k;
        }
        for (q, i) in (head..nf).enumerate() {
            lu.sel.row[i] = kept.len() + q;
        }
        lu.kind = SMALL_SEL + kept.len();
        (lu, (0..head).filter(|&i| constant[i]).collect())
    }

    /// LU with partial pivoting of M = I − γJ, J's values `jac` over the pattern `p` (the one
    /// of `new`). False when M is singular.
    #[inline(always)]
    pub(crate) fn factor(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        let (a, piv, d, sel) = (&mut self.a, &mut self.piv, &mut self.tail_d, &self.sel);
        macro_rules! lu {
            ($($k:literal => $ks:literal),*) => {
                match self.kind {
                    $($k => small_lu::<$k, false>(a, piv, d, p, jac, gamma, sel),)*
                    $($ks => small_lu::<$k, true>(a, piv, d, p, jac, gamma, sel),)*
                    k => unreachable!("small LU of kind {k} for {} states", p.n),
                }
            };
        }
        lu!(1 => 14, 2 => 15, 3 => 16, 4 => 17, 5 => 18, 6 => 19, 7 => 20, 8 => 21, 9 => 22, 10 => 23, 11 => 24, 12 => 25)
    }

    /// Solve M x = b in place with the factors of `factor` (b: one value per state of its
    /// pattern).
    #[inline(always)]
    pub(crate) fn solve(&self, b: &mut [f64]) {
        let (a, piv, d, sel) = (&self.a, &self.piv, &self.tail_d, &self.sel);
        macro_rules! solve {
            ($($k:literal => $ks:literal),*) => {
                match self.kind {
                    $($k => small_solve::<$k, false>(a, piv, d, b, sel),)*
                    $($ks => small_solve::<$k, true>(a, piv, d, b, sel),)*
                    k => unreachable!("small LU of kind {k} for {} states", b.len()),
                }
            };
        }
        solve!(1 => 14, 2 => 15, 3 => 16, 4 => 17, 5 => 18, 6 => 19, 7 => 20, 8 => 21, 9 => 22, 10 => 23, 11 => 24, 12 => 25);
    }
}

/// `band_factor` on the N×N matrix `a` (column-major: a[c][r]) held densely: the same pivot
/// choice (the first largest |value| in the column), the same interchanges of the trailing
/// columns only (L's multipliers stay where they were computed, as LAPACK's band storage keeps
/// them), the same multipliers and rank-1 updates, skipping u(j, c) = 0 as it does. Every
/// nonzero of the factors comes from the same operations in the same order; the band kernel
/// skips work on exact zeros outside the band or at the ends of its columns that this does
/// (x − 0·u), which can only change the sign of a zero: a signed zero in the factors or the
/// solution never reaches the Newton iterate (acor starts at +0 and +0 + (−0) = +0).
#[inline(always)]
pub(super) fn small_factor<const N: usize>(
    a: &mut [[f64; SMALL_MAX]; SMALL_MAX],
    piv: &mut [usize; SMALL_MAX],
) -> bool {
    const { assert!(N <= SMALL_MAX) };
    for j in 0..N {
        let mut jp = j;
        let mut big = a[j][j].abs();
        for r in j + 1..N {
            if a[j][r].abs() > big {
                big = a[j][r].abs();
                jp = r;
            }
        }
        piv[j] = jp;
        let pivot = a[j][jp];
        if pivot == 0.0 || !pivot.is_finite() {
            return false;
        }
        if jp != j {
            for col in &mut a[j..N] {
                col.swap(j, jp);
            }
        }
        let (left, right) = a.split_at_mut(j + 1);
        let l = &mut left[j];
        let inv = 1.0 / l[j];
        // The multipliers over all N rows, 0 at rows ≤ j: the updates below run over the whole
        // column, a loop of constant length N (unrolled and vectorized, where a variable
        // length spends most of a small factorization in loop control).
        // Rows ≤ j get x − 0·u = x (up to the sign of a zero, harmless as above).
        let mut m = [0.0; N];
        for (v, mr) in l[j + 1..N].iter_mut().zip(&mut m[j + 1..]) {
            *v *= inv;
            *mr = *v;
        }
        for col in &mut right[..N - j - 1] {
            let u = col[j];
            if u != 0.0 {
                for (c, &mr) in col[..N].iter_mut().zip(&m) {
                    *c -= mr * u;
                }
            }
        }
    }
    true
}

/// M = I − γJ (J's values `jac` over M's pattern `p`) into the N×N array, then `small_factor`;
/// the tail's rows below it (`SmallLu::tail`).
/// N a constant: the zeroing of each column is a few stores, not a `memset` call.
/// SEL: over the states of `sel` only (`SmallSel`), else over the first N in their own order.
#[allow(clippy::too_many_arguments)]
pub(super) fn small_lu<const N: usize, const SEL: bool>(
    a: &mut [[f64; SMALL_MAX]; SMALL_MAX],
    piv: &mut [usize; SMALL_MAX],
    tail_d: &mut [f64; SMALL_MAX],
    p: &Pattern,
    jac: &[f64],
    gamma: f64,
    sel: &SmallSel,
) -> bool {
    // The tail's diagonals M_qq (`SmallLu::tail`; the states of `p` past N, or past the
    // selection's): each its column's only entry.
    let tail_start = if SEL { sel.tail_start } else { N };
    let mut ok = true;
    for (d, &start) in tail_d.iter_mut().zip(&p.col_start[tail_start..p.n]) {
        *d = -gamma * jac[start] + 1.0;
        ok &= *d != 0.0 && d.is_finite();
    }
    if !ok {
        return false;
    }
    for (k, col) in a.iter_mut().enumerate().take(N) {
        col[..N].fill(0.0);
        let j = if SEL { sel.state[k] } else { k };
        let range = p.col_start[j]..p.col_start[j + 1];
        for (&i, v) in p.rows[range.clone()].iter().zip(&jac[range]) {
            // (No constant state's row is in a column: their rows are empty.)
            let r = if SEL { sel.row[i] } else { i };
            col[r] = -gamma * v;
        }
        col[k] += 1.0;
    }
    small_factor::<N>(a, piv)
}

/// The tail states q ≥ N of M x = b (`tail`) from their rows, after the LU's N (`SmallLu::tail`):
/// x_q = (b_q − Σ_j M_qj·x_j)/M_qq, the M_qj kept in `small_lu` below the factors.
#[inline(always)]
fn small_tail<const N: usize>(
    a: &[[f64; SMALL_MAX]; SMALL_MAX],
    d: &[f64; SMALL_MAX],
    x: &[f64; N],
    tail: &mut [f64],
) {
    const { assert!(N <= SMALL_MAX) };
    for (q, (bq, &dq)) in tail.iter_mut().zip(d).enumerate() {
        let mut r = *bq;
        for (col, &xj) in a[..N].iter().zip(x.iter()) {
            r -= col[N + q] * xj;
        }
        *bq = r / dq;
    }
}

/// Solve A x = b in place with the factors of `small_factor` (`band_solve`'s order of
/// operations: interchanges and L column by column, then U by columns from the last).
/// SEL: b over all states, the LU's gathered from and scattered back to those of `sel`
/// (`SmallSel`; the constant states' b is left as it is, their x being b = 0).
pub(super) fn small_solve<const N: usize, const SEL: bool>(
    a: &[[f64; SMALL_MAX]; SMALL_MAX],
    piv: &[usize; SMALL_MAX],
    d: &[f64; SMALL_MAX],
    b: &mut [f64],
    sel: &SmallSel,
) {
    const { assert!(N <= SMALL_MAX) };
    if SEL {
        let mut x = [0.0; N];
        for (x, &i) in x.iter_mut().zip(&sel.state) {
            *x = b[i];
        }
        small_lu_solve::<N>(a, piv, &mut x);
        for (&x, &i) in x.iter().zip(&sel.state) {
            b[i] = x;
        }
        let tail = &mut b[sel.tail_start..];
        if !tail.is_empty() {
            small_tail::<N>(a, d, &x, tail);
        }
        return;
    }
    let (b, tail) = b.split_at_mut(N);
    let Ok(b) = <&mut [f64; N]>::try_from(b) else {
        unreachable!()
    };
    small_lu_solve::<N>(a, piv, b);
    if !tail.is_empty() {
        small_tail::<N>(a, d, b, tail);
    }
}

/// The LU part of `small_solve`, in place.
#[inline(always)]
fn small_lu_solve<const N: usize>(
    a: &[[f64; SMALL_MAX]; SMALL_MAX],
    piv: &[usize; SMALL_MAX],
    b: &mut [f64; N],
) {
    for j in 0..N {
        let p = piv[j];
        if p != j {
            b.swap(p, j);
        }
        let bj = b[j];
        if bj != 0.0 {
            for r in j + 1..N {
                b[r] -= a[j][r] * bj;
            }
        }
    }
    for j in (0..N).rev() {
        b[j] /= a[j][j];
        let bj = b[j];
        for r in 0..j {
            b[r] -= a[j][r] * bj;
        }
    }
}
