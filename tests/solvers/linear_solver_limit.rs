//! A band or dense LU forced on a large network whose band is wide would store
//! n·(2kl + ku + 1) or n² values (61 GB for the band at 50k states) and abort the process on
//! the allocation. Above `MAX_FACTOR_VALUES` (1 GiB) the BDF's setup refuses it instead: the
//! step fails with a message naming the choice, the size and the alternatives, which reaches
//! the caller of `advance_to` (the FMU's fmi2DoStep returns fmi2Error with it, `cosim/mod.rs`) and
//! the CLI (a non-zero exit).

use crate::common;

use plenum::integrators::Method;
use plenum::integrators::bdf::MAX_FACTOR_VALUES;
use plenum::model::{ModelFile, build_simulation, parse_str};
use std::process::Command;

/// m tanks in a row vented at the end, with a piston on every 10th: the pistons' states come
/// after every chamber's, so in the states' own order the band is as wide as the system.
fn chain_with_pistons_text(m: usize, linear: &str) -> String {
    let mut s = format!(
        "[model]\nname = \"chain\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"bdf\"\n\
         t_end = 1e-3\nlinear_solver = \"{linear}\"\n"
    );
    s += &common::chain_components(m);
    for (k, i) in (0..m).step_by(10).enumerate() {
        s += &format!(
            "[[piston]]\nname = \"p{k}\"\nbehind = \"c{i}\"\nahead = \"atm\"\narea = 1e-4\n\
             mass = 0.1\nx0 = 0.05\nspring_stiffness = 1000.0\n"
        );
    }
    s
}

fn spec(m: usize, linear: &str) -> ModelFile {
    parse_str(&chain_with_pistons_text(m, linear), "chain.toml", &[])
        .expect("chain with pistons")
        .spec
}

/// 4,000 chambers, 400 pistons: 12,802 states; the band (kl, ku of order n) would take
/// ~10⁸·⁵ values (GBs) in its own order and the dense LU n² = 1.6·10⁸ (1.2 GiB): both refused
/// with the message, before anything is allocated, the state kept at the start; `auto` runs.
#[test]
fn a_band_or_dense_lu_too_large_is_refused_with_a_message() {
    let m = 4000;
    let n = 3 * m + 2 * (m / 10) + 2;
    assert!(n * n > MAX_FACTOR_VALUES);
    let tail = format!(
        "above the limit of {MAX_FACTOR_VALUES} values (1 GiB); use linear_solver = \"auto\" or \
         \"sparse\" (state kept at t = 0 s)"
    );
    for linear in ["band", "dense"] {
        let mut sim = build_simulation(&spec(m, linear), None).expect("builds");
        let err = sim.advance_to(1e-4).expect_err("refused").to_string();
        println!("{linear}: {err}");
        assert_eq!(sim.t_s, 0.0);
        let head = format!(
            "solver failure: linear_solver = \"{linear}\": the {linear} LU of M = I − γJ for {n} \
             states would store "
        );
        assert!(err.starts_with(&head) && err.ends_with(&tail), "{err}");
        if linear == "dense" {
            let size = format!(
                "{} values ({:.1} GiB), ",
                n * n,
                (n * n) as f64 * 8.0 / (1u64 << 30) as f64
            );
            assert_eq!(err, format!("{head}{size}{tail}"));
        }
    }
    let mut auto = build_simulation(&spec(m, "auto"), None).expect("builds");
    let _ = auto.advance_to(1e-6).expect("auto runs");
    match &auto.integrator {
        Method::Bdf(b) => assert!(b.uses_reordered_band_lu() && !b.uses_sparse_lu()),
        _ => unreachable!("bdf"),
    }
}

/// The CLI: a non-zero exit, the message on stderr.
#[test]
fn the_cli_refuses_a_band_lu_too_large() {
    let dir = std::env::temp_dir().join(format!("plenum-band-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("chain.toml"),
        chain_with_pistons_text(4000, "band"),
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_plenum"))
        .current_dir(&dir)
        .args(["run", "chain.toml", "--quiet"])
        .output()
        .expect("runs");
    std::fs::remove_dir_all(&dir).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("exit {:?}\n{stderr}", out.status.code());
    assert!(!out.status.success());
    assert!(
        stderr.contains("linear_solver = \"band\": the band LU of M = I − γJ for 12802 states")
            && stderr.contains("use linear_solver = \"auto\" or \"sparse\""),
        "{stderr}"
    );
}
