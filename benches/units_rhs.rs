//! Right-hand side of the projectile and of a chain with pistons, for the A/B of the typed
//! (uom) component parameters against the commit before them (docs/performance.md, "Units"). Plain
//! `Network::rhs` on the initial state, best of 15 batches; no allocation in the timed loop.
//!
//! `cargo bench --bench units_rhs` (`-- --quick` for 3 batches).

use std::fmt::Write;
use std::hint::black_box;
use std::time::Instant;

use plenum::ode::OdeSystem;

/// A chain of `m` chambers joined by m − 1 orifices, a piston from every 10th chamber to the
/// atmosphere (the shape of `benches/scale.rs`'s generator, smaller).
fn chain(m: usize) -> String {
    let mut s = String::from(
        "[model]\nname = \"chain\"\n\n[gas]\nspecies = \"air\"\n\n[solver]\nmethod = \"rk4\"\n\
         step = 1e-7\nt_end = 1.0\n\n[[reservoir]]\nname = \"atm\"\npressure = 101325.0\n\
         temperature = 300.0\n",
    );
    for i in 0..m {
        let p = 2e5 + 1e5 * (i % 7) as f64 / 7.0;
        let _ = write!(
            s,
            "\n[[chamber]]\nname = \"c{i}\"\nvolume = 1e-3\npressure = {p:?}\ntemperature = 300.0\n"
        );
    }
    for i in 1..m {
        let _ = write!(
            s,
            "\n[[orifice]]\nname = \"o{i}\"\nfrom = \"c{}\"\nto = \"c{i}\"\narea = 1e-6\n",
            i - 1
        );
    }
    for i in (0..m).step_by(10) {
        let _ = write!(
            s,
            "\n[[piston]]\nname = \"p{i}\"\nbehind = \"c{i}\"\nahead = \"atm\"\narea = 1e-4\n\
             mass = 1e-3\nx0 = 0.0\nspring_stiffness = 10.0\ndamping = 0.01\n"
        );
    }
    s
}

fn rhs_ns(text: &str, batches: usize, calls: usize) -> (usize, f64) {
    let model = plenum::model::parse_str(text, "bench.toml", &[]).expect("model parses");
    let mut sim = plenum::model::build_simulation(&model.spec, None).expect("model builds");
    let y = sim.y.clone();
    let mut dydt = vec![0.0; y.len()];
    let mut best = f64::INFINITY;
    for _ in 0..batches {
        let t0 = Instant::now();
        for _ in 0..calls {
            sim.network.rhs(0.0, black_box(&y), &mut dydt);
            black_box(&dydt);
        }
        best = best.min(t0.elapsed().as_secs_f64() / calls as f64);
    }
    (y.len(), best * 1e9)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let batches = if quick { 3 } else { 15 };
    let projectile = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/projectile.toml"
    ))
    .expect("models/projectile.toml");
    for (label, text, calls) in [
        ("projectile", projectile, 200_000),
        ("chain 100", chain(100), 5_000),
        ("chain 1000", chain(1000), 500),
    ] {
        let (n, ns) = rhs_ns(&text, batches, calls);
        println!("rhs {label:<11} {n:>5} states: {ns:>10.1} ns");
    }
}
