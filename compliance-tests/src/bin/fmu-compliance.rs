//! `fmu-compliance FMU... [--methods m1,m2|all] [--cycles N] [--valgrind] [--valgrind-cycles N]
//! [--unload-cycles N] [--procedures p1,p2] [--dump DIR]`
//!
//! Opens each `.fmu` as a master does (unzip, modelDescription.xml, dlopen of the binary of the
//! platform the runner is built for, `binaries/linux64/<modelIdentifier>.so` or
//! `binaries/win64/<modelIdentifier>.dll`, the C logger and allocator of `c/callbacks.c`) and
//! runs the FMI state procedures (docs/fmu.md) on the shipped model and on each requested method
//! variant: one line per procedure, `PASS` or `FAIL`, with its figures. Exit code 0 when every
//! procedure passed, 1 otherwise, 2 for bad arguments or an FMU that cannot be opened.
//!
//! Procedures (`--procedures`; default all but trajectory, valgrind and unload; `--valgrind` adds
//! the last two):
//! store-restore, handles (communication step h), handles-0.37h (0.37·h, which divides no
//! integrator step), serialization (state file read by a new process), leak (N cycles, resident
//! growth < 1 MiB), valgrind (memcheck, 0 bytes definitely/indirectly lost, no invalid access;
//! skipped with a message when valgrind is not installed), unload (memcheck over N cycles of
//! dlopen → instantiate → 100 FMU states never freed → fmi2FreeInstance → dlclose: every state
//! given back by fmi2FreeInstance, nothing left behind by the unload), trajectory (the default
//! experiment, every output after every step, written to `DIR/<model>-<method>.rows` with
//! `--dump DIR`, for comparing platforms).
//!
//! Hidden subcommands (the processes the runner starts): `__resume ...`, `__cycles ...`,
//! `__unload ...`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use compliance_tests::fmu::{Unpacked, temp_dir, unpack};
use compliance_tests::procedures::{self, Case, Resume};

const ALL: [&str; 8] = [
    "store-restore",
    "handles",
    "handles-0.37h",
    "serialization",
    "leak",
    "trajectory",
    "valgrind",
    "unload",
];

/// FMU states each unload cycle takes and never frees (plus one by deserialization).
const UNLOAD_STATES: usize = 100;

struct Options {
    fmus: Vec<PathBuf>,
    methods: Option<Vec<String>>,
    procedures: Vec<String>,
    cycles: usize,
    valgrind_cycles: usize,
    dump: Option<PathBuf>,
    unload_cycles: usize,
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("fmu-compliance: {msg}");
    eprintln!(
        "usage: fmu-compliance FMU... [--methods m1,m2|all] [--procedures p1,p2] [--cycles N] \
         [--valgrind] [--valgrind-cycles N] [--unload-cycles N] [--dump DIR]\n  procedures: {}",
        ALL.join(", ")
    );
    ExitCode::from(2)
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        fmus: Vec::new(),
        methods: None,
        procedures: ALL[..5].iter().map(|s| s.to_string()).collect(),
        cycles: 10_000,
        valgrind_cycles: 1_000,
        dump: None,
        unload_cycles: 5,
    };
    let mut valgrind = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--methods" => {
                let v = value("--methods")?;
                o.methods = Some(if v == "all" {
                    plenum::integrators::METHODS
                        .iter()
                        .map(|(n, _)| n.to_string())
                        .filter(|n| n != "auto")
                        .collect()
                } else {
                    v.split(',').map(str::to_string).collect()
                });
            }
            "--procedures" => {
                let v = value("--procedures")?;
                o.procedures = v.split(',').map(str::to_string).collect();
                for p in &o.procedures {
                    if !ALL.contains(&p.as_str()) {
                        return Err(format!("unknown procedure {p:?}"));
                    }
                }
            }
            "--cycles" => {
                o.cycles = value("--cycles")?
                    .parse()
                    .map_err(|e| format!("--cycles: {e}"))?
            }
            "--valgrind-cycles" => {
                o.valgrind_cycles = value("--valgrind-cycles")?
                    .parse()
                    .map_err(|e| format!("--valgrind-cycles: {e}"))?
            }
            "--unload-cycles" => {
                o.unload_cycles = value("--unload-cycles")?
                    .parse()
                    .map_err(|e| format!("--unload-cycles: {e}"))?
            }
            "--valgrind" => valgrind = true,
            "--dump" => o.dump = Some(PathBuf::from(value("--dump")?)),
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s => o.fmus.push(PathBuf::from(s)),
        }
    }
    for p in ["valgrind", "unload"] {
        if valgrind && !o.procedures.iter().any(|q| q == p) {
            o.procedures.push(p.into());
        }
    }
    if o.fmus.is_empty() {
        return Err("no .fmu given".into());
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    compliance_tests::set_print_all_logs(false);
    match args.first().map(String::as_str) {
        Some("__resume") => {
            return match Resume::from_args(&args[1..]).and_then(|r| r.run()) {
                Ok(n) => {
                    println!("resumed: {n} steps");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("__resume: {e}");
                    ExitCode::from(1)
                }
            };
        }
        Some("__unload") => {
            return match procedures::run_unload_from_args(&args[1..]) {
                Ok(s) => {
                    println!("{s}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("__unload: {e}");
                    ExitCode::from(1)
                }
            };
        }
        Some("__cycles") => {
            return match procedures::run_cycles_from_args(&args[1..]) {
                Ok(s) => {
                    println!("{s}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("__cycles: {e}");
                    ExitCode::from(1)
                }
            };
        }
        _ => {}
    }
    let o = match parse(&args) {
        Ok(o) => o,
        Err(e) => return usage(&e),
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return usage(&format!("cannot find this executable: {e}")),
    };
    if let Some(d) = &o.dump
        && let Err(e) = std::fs::create_dir_all(d)
    {
        return usage(&format!("--dump {}: {e}", d.display()));
    }
    let work = temp_dir("work");
    if let Err(e) = std::fs::create_dir_all(&work) {
        return usage(&format!("{}: {e}", work.display()));
    }
    let clock = Instant::now();
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for path in &o.fmus {
        let unpacked: Unpacked = match unpack(path) {
            Ok(u) => u,
            Err(e) => {
                eprintln!("fmu-compliance: {e}");
                return ExitCode::from(2);
            }
        };
        let md = &unpacked.md;
        println!(
            "== {}: model {}, GUID {}, {} outputs, default experiment {}..{} s step {} s, \
             canGetAndSetFMUstate={} canSerializeFMUstate={}",
            path.display(),
            md.model_identifier,
            md.guid,
            md.outputs.len(),
            md.start_time,
            md.stop_time,
            md.step_size,
            md.can_get_and_set_fmu_state,
            md.can_serialize_fmu_state
        );
        let lib = match compliance_tests::load_library(&unpacked.library) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("fmu-compliance: {e}");
                return ExitCode::from(2);
            }
        };
        let methods: Vec<Option<&str>> = match &o.methods {
            None => vec![None],
            Some(m) => m.iter().map(|s| Some(s.as_str())).collect(),
        };
        for method in methods {
            let variant = match unpacked.variant(method) {
                Ok(v) => v,
                Err(e) => {
                    println!("FAIL {}/{}: {e}", md.model_name, method.unwrap_or("?"));
                    failed += 1;
                    continue;
                }
            };
            let case = Case {
                lib,
                library: unpacked.library.clone(),
                label: variant.label.clone(),
                guid: variant.guid.clone(),
                resources: variant.resources.clone(),
                outputs: md.outputs.clone(),
                start: md.start_time,
                stop: md.stop_time,
                h: md.step_size,
            };
            for p in &o.procedures {
                let started = Instant::now();
                let outcome = match p.as_str() {
                    "store-restore" => procedures::store_restore(&case),
                    "handles" => procedures::multiple_handles(&case, case.h),
                    "handles-0.37h" => procedures::multiple_handles(&case, 0.37 * case.h),
                    "serialization" => procedures::serialization(&case, &exe, &work),
                    "leak" => procedures::leaks(&case, o.cycles),
                    "trajectory" => procedures::trajectory(&case, o.dump.as_deref()),
                    "valgrind" => {
                        if !procedures::valgrind_available() {
                            println!(
                                "SKIP {} valgrind: valgrind is not installed (apt-get install \
                                 valgrind); CI installs it",
                                case.label
                            );
                            skipped += 1;
                            continue;
                        }
                        procedures::valgrind(&case, &exe, o.valgrind_cycles)
                    }
                    "unload" => {
                        if !procedures::valgrind_available() {
                            println!(
                                "SKIP {} unload: valgrind is not installed (apt-get install \
                                 valgrind); CI installs it",
                                case.label
                            );
                            skipped += 1;
                            continue;
                        }
                        procedures::unload(&case, &exe, o.unload_cycles, UNLOAD_STATES)
                    }
                    _ => unreachable!("checked in parse"),
                };
                let secs = started.elapsed().as_secs_f64();
                match outcome {
                    Ok(figures) => {
                        passed += 1;
                        println!("PASS {} {p}: {figures} [{secs:.2} s]", case.label);
                    }
                    Err(why) => {
                        failed += 1;
                        println!("FAIL {} {p}: {why} [{secs:.2} s]", case.label);
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "== {passed} passed, {failed} failed, {skipped} skipped in {:.1} s",
        clock.elapsed().as_secs_f64()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
