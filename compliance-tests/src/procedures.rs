//! The FMI state procedures (FMUComplianceChecker's "Testing procedure for FMI 2.0 interface
//! and setting/getting state support"; FMI 2.0 §2.1.8), as a master runs
//! them, on one FMU variant: store/restore after initialization, several handles, serialization
//! into a file read by a new process, and the memory procedure (resident set, master
//! allocations, and valgrind memcheck).
//!
//! A master clock advances by `t += h` (as FMPy's does); every row is the fmi2DoStep status and
//! every output's bit pattern after the step. "Bit-identical" compares those bits.

use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr;
use std::time::Instant;

use crate::*;

/// One FMU variant to run the procedures on.
#[derive(Clone)]
pub struct Case {
    pub lib: &'static Fmi2Binding,
    /// The shared library's path (for the processes the procedures start).
    pub library: PathBuf,
    pub label: String,
    pub guid: String,
    pub resources: PathBuf,
    pub outputs: Vec<u32>,
    pub start: f64,
    pub stop: f64,
    /// The communication step (DefaultExperiment stepSize).
    pub h: f64,
}

/// A procedure's result: figures for the report line, or what went wrong.
pub type Outcome = Result<String, String>;

/// fmi2DoStep status and every output's bits after one step.
pub type Row = (u32, Vec<u64>);

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

fn status_name(s: u32) -> &'static str {
    match s {
        0 => "fmi2OK",
        1 => "fmi2Warning",
        2 => "fmi2Discard",
        3 => "fmi2Error",
        4 => "fmi2Fatal",
        5 => "fmi2Pending",
        _ => "?",
    }
}

impl Case {
    pub fn instantiate(&self) -> Result<Fmu, String> {
        Fmu::from_description(
            self.lib,
            &self.label,
            &self.guid,
            &self.resources,
            &self.outputs,
        )
    }

    /// Instantiated → setupExperiment(start, no stop time) → initialization mode → stepComplete.
    pub fn initialized(&self) -> Result<Fmu, String> {
        let fmu = self.instantiate()?;
        // SAFETY: FMI calls on a live instance.
        unsafe {
            let s = fmu
                .lib
                .fmi2SetupExperiment(fmu.c, 0, 0.0, self.start, 0, 0.0);
            ensure!(s == OK, "fmi2SetupExperiment: {}", status_name(s));
            let s = fmu.lib.fmi2EnterInitializationMode(fmu.c);
            ensure!(s == OK, "fmi2EnterInitializationMode: {}", status_name(s));
            let s = fmu.lib.fmi2ExitInitializationMode(fmu.c);
            ensure!(s == OK, "fmi2ExitInitializationMode: {}", status_name(s));
        }
        Ok(fmu)
    }

    /// Steps from the start to `fraction` of the default experiment with step `h`.
    pub fn steps_to(&self, fraction: f64, h: f64) -> usize {
        ((self.stop - self.start) * fraction / h).round() as usize
    }
}

/// Up to `n` steps of `h` from the master's clock `t`; stops after a status other than fmi2OK
/// or fmi2Warning (the run ended or failed). Outputs are read after every step.
pub fn run_steps(fmu: &Fmu, t: &mut f64, h: f64, n: usize) -> Result<Vec<Row>, String> {
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let s = fmu.do_step(*t, h);
        ensure!(
            s == OK || s == WARNING || s == DISCARD,
            "fmi2DoStep({t}, {h}) returned {}: {:?}",
            status_name(s),
            fmu.logs().last().map(|r| r.text.clone())
        );
        let (gs, v) = fmu.get_real(&fmu.outputs);
        ensure!(gs == OK, "fmi2GetReal after the step: {}", status_name(gs));
        rows.push((s, v.iter().map(|x| x.to_bits()).collect()));
        if s == DISCARD {
            break;
        }
        *t += h;
    }
    Ok(rows)
}

/// Where two row lists first differ (row, output; output = usize::MAX for the status or the
/// number of rows), and how many values differ in all.
pub fn compare(a: &[Row], b: &[Row]) -> (Option<(usize, usize)>, usize) {
    let mut first = None;
    let mut n = 0;
    for (i, (ra, rb)) in a.iter().zip(b).enumerate() {
        if ra.0 != rb.0 {
            n += 1;
            first = first.or(Some((i, usize::MAX)));
        }
        for (j, (x, y)) in ra.1.iter().zip(&rb.1).enumerate() {
            if x != y {
                n += 1;
                first = first.or(Some((i, j)));
            }
        }
    }
    if a.len() != b.len() {
        n += a.len().abs_diff(b.len());
        first = first.or(Some((a.len().min(b.len()), usize::MAX)));
    }
    (first, n)
}

fn values(rows: &[Row]) -> usize {
    rows.iter().map(|r| r.1.len()).sum()
}

fn same(what: &str, a: &[Row], b: &[Row]) -> Result<usize, String> {
    let (first, n) = compare(a, b);
    if let Some((i, j)) = first {
        return Err(format!(
            "{what}: {n} values differ (rows {} vs {}); first at row {i}, output {}",
            a.len(),
            b.len(),
            if j == usize::MAX {
                "status/length".to_string()
            } else {
                j.to_string()
            }
        ));
    }
    Ok(values(a))
}

fn last_time(rows: &[Row]) -> f64 {
    rows.last().map_or(f64::NAN, |r| f64::from_bits(r.1[0]))
}

fn get_state(fmu: &Fmu) -> Result<fmi2FMUstate, String> {
    let mut s: fmi2FMUstate = ptr::null_mut();
    let st = fmu.get_state(&mut s);
    ensure!(
        st == OK && !s.is_null(),
        "fmi2GetFMUstate: {}",
        status_name(st)
    );
    Ok(s)
}

fn set_state(fmu: &Fmu, s: fmi2FMUstate) -> Result<(), String> {
    let st = fmu.set_state(s);
    ensure!(st == OK, "fmi2SetFMUstate: {}", status_name(st));
    Ok(())
}

fn free_state(fmu: &Fmu, s: &mut fmi2FMUstate) -> Result<(), String> {
    let st = fmu.free_state(s);
    ensure!(
        st == OK && s.is_null(),
        "fmi2FreeFMUstate: {}",
        status_name(st)
    );
    Ok(())
}

/// Procedure 1: state stored after fmi2ExitInitializationMode, the steps to 10 % logged, state
/// restored, the same steps again: bit-identical.
pub fn store_restore(case: &Case) -> Outcome {
    let fmu = case.initialized()?;
    let mut s = get_state(&fmu)?;
    let n = case.steps_to(0.1, case.h).max(1);
    let mut t = case.start;
    let first = run_steps(&fmu, &mut t, case.h, n)?;
    set_state(&fmu, s)?;
    let t0 = fmu.time();
    ensure!(
        t0.to_bits() == case.start.to_bits(),
        "time after restore is {t0}, not {}",
        case.start
    );
    let mut t = case.start;
    let second = run_steps(&fmu, &mut t, case.h, n)?;
    let compared = same("second run after restore", &first, &second)?;
    free_state(&fmu, &mut s)?;
    Ok(format!(
        "{} steps of {} s to t = {} s twice, {compared} values bit-identical, 0 differ",
        first.len(),
        case.h,
        last_time(&second)
    ))
}

/// Procedure 2 with communication step `h`: handles at 10 % and 20 %, run to 30 %, restore
/// handle 2 and rerun to 30 %, restore handle 1 and rerun to 30 %: bit-identical in 20–30 %
/// (and 10–20 % for handle 1).
pub fn multiple_handles(case: &Case, h: f64) -> Outcome {
    let fmu = case.initialized()?;
    let (k1, k2, k3) = (
        case.steps_to(0.1, h).max(1),
        case.steps_to(0.2, h).max(2),
        case.steps_to(0.3, h).max(3),
    );
    let mut t = case.start;
    let to_10 = run_steps(&fmu, &mut t, h, k1)?;
    ensure!(to_10.len() == k1, "the run ended before 10 %");
    let t1 = t;
    let mut h1 = get_state(&fmu)?;
    let r_10_20 = run_steps(&fmu, &mut t, h, k2 - k1)?;
    ensure!(r_10_20.len() == k2 - k1, "the run ended before 20 %");
    let t2 = t;
    let mut h2 = get_state(&fmu)?;
    let r_20_30 = run_steps(&fmu, &mut t, h, k3 - k2)?;

    set_state(&fmu, h2)?;
    let mut t = t2;
    let again2 = run_steps(&fmu, &mut t, h, k3 - k2)?;
    let n2 = same("20–30 % after restoring handle 2", &r_20_30, &again2)?;

    set_state(&fmu, h1)?;
    let mut t = t1;
    let again1 = run_steps(&fmu, &mut t, h, k3 - k1)?;
    let split = (k2 - k1).min(again1.len());
    let n1a = same(
        "10–20 % after restoring handle 1",
        &r_10_20,
        &again1[..split],
    )?;
    let n1b = same(
        "20–30 % after restoring handle 1",
        &r_20_30,
        &again1[split..],
    )?;
    free_state(&fmu, &mut h1)?;
    free_state(&fmu, &mut h2)?;
    let ended = if r_20_30.len() < k3 - k2 {
        format!(" (run ended at t = {} s)", last_time(&r_20_30))
    } else {
        String::new()
    };
    Ok(format!(
        "h = {h:e} s; handles at t = {t1} s and {t2} s; 20–30 %: {} steps to t = {} s{ended}; \
         after handle 2: {n2} values, after handle 1: {} values bit-identical, 0 differ",
        r_20_30.len(),
        last_time(&r_20_30),
        n1a + n1b
    ))
}

/// The default experiment from its start to its stop time in steps of h, every output read
/// after initialization and after every step: the rows that runs on other platforms are compared
/// with (written to `dump/<model>-<method>.rows` when `dump` is given, see [`write_rows`]; the
/// first row's status is 0).
pub fn trajectory(case: &Case, dump: Option<&Path>) -> Outcome {
    let fmu = case.initialized()?;
    let mut t = case.start;
    let n = case.steps_to(1.0, case.h);
    let mut rows = vec![(OK, fmu.outputs_bits())];
    rows.extend(run_steps(&fmu, &mut t, case.h, n)?);
    let not_ok = rows.iter().filter(|r| r.0 != OK).count();
    if let Some(dir) = dump {
        let file = dir.join(format!("{}.rows", case.label.replace('/', "-")));
        write_rows(&file, &rows).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(format!(
        "{} rows of {} values to t = {} s; {not_ok} steps not fmi2OK",
        rows.len(),
        case.outputs.len(),
        last_time(&rows)
    ))
}

/// A serialized run's continuation, written by the child process: rows as (status u32, every
/// output u64), little-endian.
pub fn write_rows(path: &Path, rows: &[Row]) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    for (s, v) in rows {
        bytes.extend_from_slice(&s.to_le_bytes());
        for x in v {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, bytes)
}

pub fn read_rows(path: &Path, n_outputs: usize) -> Result<Vec<Row>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let row = 4 + 8 * n_outputs;
    ensure!(
        bytes.len() % row == 0,
        "{}: {} bytes is not a whole number of rows",
        path.display(),
        bytes.len()
    );
    Ok(bytes
        .chunks(row)
        .map(|c| {
            let s = u32::from_le_bytes(c[..4].try_into().unwrap_or_default());
            let v = c[4..]
                .chunks(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
                .collect();
            (s, v)
        })
        .collect())
}

/// What the child process of [`serialization`] does: a new instance from scratch, the state
/// read from `state_file` deserialized and set, `n` steps of `h` from `t` written to `out`.
pub struct Resume {
    pub case: Case,
    pub state_file: PathBuf,
    pub t: f64,
    pub h: f64,
    pub n: usize,
    pub out: PathBuf,
}

impl Resume {
    pub fn args(&self) -> Vec<String> {
        let c = &self.case;
        vec![
            "__resume".into(),
            c.library.display().to_string(),
            c.resources.display().to_string(),
            c.guid.clone(),
            c.label.clone(),
            c.outputs
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(","),
            format!("{:x}", c.start.to_bits()),
            self.state_file.display().to_string(),
            format!("{:x}", self.t.to_bits()),
            format!("{:x}", self.h.to_bits()),
            self.n.to_string(),
            self.out.display().to_string(),
        ]
    }

    /// The inverse of [`Resume::args`] (without the subcommand).
    pub fn from_args(a: &[String]) -> Result<Resume, String> {
        ensure!(
            a.len() == 11,
            "__resume takes 11 arguments, got {}",
            a.len()
        );
        let bits = |s: &str| {
            u64::from_str_radix(s, 16)
                .map(f64::from_bits)
                .map_err(|e| format!("{s}: {e}"))
        };
        let library = PathBuf::from(&a[0]);
        let outputs = a[4]
            .split(',')
            .map(|v| v.parse::<u32>().map_err(|e| format!("{v}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Resume {
            case: Case {
                lib: load_library(&library)?,
                library,
                resources: PathBuf::from(&a[1]),
                guid: a[2].clone(),
                label: a[3].clone(),
                outputs,
                start: bits(&a[5])?,
                stop: f64::NAN,
                h: bits(&a[8])?,
            },
            state_file: PathBuf::from(&a[6]),
            t: bits(&a[7])?,
            h: bits(&a[8])?,
            n: a[9].parse().map_err(|e| format!("{}: {e}", a[9]))?,
            out: PathBuf::from(&a[10]),
        })
    }

    /// Run in this (new) process.
    pub fn run(&self) -> Result<usize, String> {
        let blob = std::fs::read(&self.state_file)
            .map_err(|e| format!("{}: {e}", self.state_file.display()))?;
        let fmu = self.case.initialized()?;
        let mut s: fmi2FMUstate = ptr::null_mut();
        let st = fmu.deserialize(&blob, &mut s);
        ensure!(
            st == OK,
            "fmi2DeSerializeFMUstate: {}: {:?}",
            status_name(st),
            fmu.logs()
        );
        set_state(&fmu, s)?;
        free_state(&fmu, &mut s)?;
        let mut t = self.t;
        let rows = run_steps(&fmu, &mut t, self.h, self.n)?;
        write_rows(&self.out, &rows).map_err(|e| format!("{}: {e}", self.out.display()))?;
        Ok(rows.len())
    }
}

/// Procedure 3: a full run; from scratch to 10 %, the state serialized into a file; a new
/// process (`exe __resume ...`) instantiates from scratch, deserializes, runs to the end: every
/// row bit-identical to the full run's.
pub fn serialization(case: &Case, exe: &Path, work: &Path) -> Outcome {
    let n_total = case.steps_to(1.0, case.h);
    let full = {
        let fmu = case.initialized()?;
        let mut t = case.start;
        run_steps(&fmu, &mut t, case.h, n_total)?
    };
    let k = case.steps_to(0.1, case.h).max(1);
    ensure!(full.len() > k, "the full run ended before 10 %");
    let tag = case.label.replace('/', "-");
    let state_file = work.join(format!("{tag}.state"));
    let out = work.join(format!("{tag}.rows"));
    let (t, size) = {
        let fmu = case.initialized()?;
        let mut t = case.start;
        run_steps(&fmu, &mut t, case.h, k)?;
        let mut s = get_state(&fmu)?;
        let blob = fmu.serialize(s);
        free_state(&fmu, &mut s)?;
        std::fs::write(&state_file, &blob).map_err(|e| format!("{}: {e}", state_file.display()))?;
        (t, blob.len())
    };
    let resume = Resume {
        case: case.clone(),
        state_file,
        t,
        h: case.h,
        n: n_total - k,
        out: out.clone(),
    };
    let child = Command::new(exe)
        .args(resume.args())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    ensure!(
        child.status.success(),
        "the new process failed ({}):\n{}{}",
        child.status,
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    let rest = read_rows(&out, case.outputs.len())?;
    let n = same("the new process's run vs the full run", &full[k..], &rest)?;
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&resume.state_file);
    Ok(format!(
        "{size}-byte state file at t = {t} s; a new process ran {} steps to t = {} s \
         (last status {}), {n} values bit-identical to the full run, 0 differ",
        rest.len(),
        last_time(&rest),
        status_name(rest.last().map_or(99, |r| r.0))
    ))
}

/// Resident set size of this process, bytes (/proc/self/statm).
#[cfg(unix)]
pub fn resident_bytes() -> Result<u64, String> {
    let statm = std::fs::read_to_string("/proc/self/statm")
        .map_err(|e| format!("/proc/self/statm: {e}"))?;
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("/proc/self/statm: {statm:?}"))?;
    // SAFETY: sysconf is thread-safe.
    let page = unsafe { libc_sysconf_pagesize() };
    Ok(pages * page)
}

#[cfg(unix)]
unsafe extern "C" {
    fn sysconf(name: i32) -> i64;
}

/// `sysconf(_SC_PAGESIZE)` (30 on Linux).
#[cfg(unix)]
unsafe fn libc_sysconf_pagesize() -> u64 {
    // SAFETY: plain libc call.
    let p = unsafe { sysconf(30) };
    if p > 0 { p as u64 } else { 4096 }
}

/// Working set of this process, bytes (K32GetProcessMemoryInfo: Windows' resident set).
#[cfg(windows)]
pub fn resident_bytes() -> Result<u64, String> {
    /// PROCESS_MEMORY_COUNTERS (psapi.h).
    #[repr(C)]
    #[derive(Default)]
    struct Counters {
        cb: u32,
        page_fault_count: u32,
        peak_working_set_size: usize,
        working_set_size: usize,
        quota_peak_paged_pool_usage: usize,
        quota_paged_pool_usage: usize,
        quota_peak_non_paged_pool_usage: usize,
        quota_non_paged_pool_usage: usize,
        pagefile_usage: usize,
        peak_pagefile_usage: usize,
    }
    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetCurrentProcess() -> *mut std::ffi::c_void;
        fn K32GetProcessMemoryInfo(
            process: *mut std::ffi::c_void,
            counters: *mut Counters,
            cb: u32,
        ) -> i32;
    }
    let mut c = Counters {
        cb: std::mem::size_of::<Counters>() as u32,
        ..Counters::default()
    };
    // SAFETY: a pseudo-handle of this process and a counters struct of the size passed.
    let ok = unsafe { K32GetProcessMemoryInfo(GetCurrentProcess(), &mut c, c.cb) };
    if ok == 0 {
        return Err("K32GetProcessMemoryInfo failed".into());
    }
    Ok(c.working_set_size as u64)
}

/// `cycles` of get state (a new handle) → one short step → set state → free state, from the
/// instance's current time. Returns the time before and after.
pub fn cycles(fmu: &Fmu, t: f64, h_short: f64, cycles: usize) -> Result<(), String> {
    for i in 0..cycles {
        let mut s = get_state(fmu)?;
        let st = fmu.do_step(t, h_short);
        ensure!(
            st == OK || st == WARNING,
            "cycle {i}: fmi2DoStep: {}",
            status_name(st)
        );
        set_state(fmu, s)?;
        free_state(fmu, &mut s)?;
    }
    Ok(())
}

/// The short step of the memory procedures: 1 % of the communication step.
pub fn short_step(case: &Case) -> f64 {
    case.h / 100.0
}

/// Procedure 4: `n` cycles of get/step/set/free: resident memory growth below 1 MiB (after
/// 100 warm-up cycles), the master's allocations all returned, the time unchanged.
pub fn leaks(case: &Case, n: usize) -> Outcome {
    const LIMIT: u64 = 1 << 20;
    let fmu = case.initialized()?;
    let mut t = case.start;
    run_steps(&fmu, &mut t, case.h, 1)?;
    let t0 = fmu.time();
    let h = short_step(case);
    cycles(&fmu, t, h, 100)?;
    let live0 = live_allocations();
    let rss0 = resident_bytes()?;
    let clock = Instant::now();
    cycles(&fmu, t, h, n)?;
    let secs = clock.elapsed().as_secs_f64();
    let rss1 = resident_bytes()?;
    let live1 = live_allocations();
    let t1 = fmu.time();
    let growth = rss1 as i64 - rss0 as i64;
    let figures = format!(
        "{n} cycles of get/step {h:e} s/set/free in {secs:.2} s: resident {} KiB → {} KiB, \
         growth {} KiB (limit {} KiB); live master allocations {live0} → {live1}; time {t0} → {t1}",
        rss0 / 1024,
        rss1 / 1024,
        growth / 1024,
        LIMIT / 1024
    );
    ensure!(growth < LIMIT as i64, "{figures}");
    ensure!(live1 == live0, "master allocations leak: {figures}");
    ensure!(t0.to_bits() == t1.to_bits(), "time changed: {figures}");
    Ok(figures)
}

/// The figures valgrind prints in its summary.
#[derive(Debug, Default, PartialEq)]
pub struct ValgrindSummary {
    pub definitely_lost: u64,
    pub indirectly_lost: u64,
    pub possibly_lost: u64,
    pub errors: u64,
    pub invalid_reads: usize,
    pub invalid_writes: usize,
}

fn bytes_after(text: &str, label: &str) -> Option<u64> {
    let line = text.lines().rev().find(|l| l.contains(label))?;
    let rest = line.split(label).nth(1)?.trim_start();
    let num: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    num.parse().ok()
}

/// Parse valgrind's stderr (a missing "definitely lost" line means "All heap blocks were
/// freed").
pub fn parse_valgrind(stderr: &str) -> Result<ValgrindSummary, String> {
    let errors = bytes_after(stderr, "ERROR SUMMARY:")
        .ok_or_else(|| "no ERROR SUMMARY in valgrind's output".to_string())?;
    Ok(ValgrindSummary {
        definitely_lost: bytes_after(stderr, "definitely lost:").unwrap_or(0),
        indirectly_lost: bytes_after(stderr, "indirectly lost:").unwrap_or(0),
        possibly_lost: bytes_after(stderr, "possibly lost:").unwrap_or(0),
        errors,
        invalid_reads: stderr.matches("Invalid read").count(),
        invalid_writes: stderr.matches("Invalid write").count(),
    })
}

/// Whether valgrind can be run.
pub fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Arguments of the `__cycles` subcommand (the process valgrind watches).
pub fn cycles_args(case: &Case, n: usize) -> Vec<String> {
    vec![
        "__cycles".into(),
        case.library.display().to_string(),
        case.resources.display().to_string(),
        case.guid.clone(),
        case.label.clone(),
        format!("{:x}", case.start.to_bits()),
        format!("{:x}", case.h.to_bits()),
        n.to_string(),
    ]
}

/// The `__cycles` subcommand: instantiate, one step, `n` cycles, free, unload nothing.
pub fn run_cycles_from_args(a: &[String]) -> Result<String, String> {
    ensure!(a.len() == 7, "__cycles takes 7 arguments, got {}", a.len());
    let bits = |s: &str| {
        u64::from_str_radix(s, 16)
            .map(f64::from_bits)
            .map_err(|e| format!("{s}: {e}"))
    };
    let library = PathBuf::from(&a[0]);
    let case = Case {
        lib: load_library(&library)?,
        library,
        resources: PathBuf::from(&a[1]),
        guid: a[2].clone(),
        label: a[3].clone(),
        outputs: vec![0],
        start: bits(&a[4])?,
        stop: f64::NAN,
        h: bits(&a[5])?,
    };
    let n: usize = a[6].parse().map_err(|e| format!("{}: {e}", a[6]))?;
    let fmu = case.initialized()?;
    let mut t = case.start;
    run_steps(&fmu, &mut t, case.h, 1)?;
    // Serialization too, so its buffers are watched as well.
    let mut s = get_state(&fmu)?;
    let blob = fmu.serialize(s);
    let mut d: fmi2FMUstate = ptr::null_mut();
    ensure!(
        fmu.deserialize(&blob, &mut d) == OK,
        "fmi2DeSerializeFMUstate"
    );
    set_state(&fmu, d)?;
    free_state(&fmu, &mut d)?;
    free_state(&fmu, &mut s)?;
    cycles(&fmu, t, short_step(&case), n)?;
    let time = fmu.time();
    drop(fmu);
    Ok(format!("{n} cycles at t = {time} s"))
}

/// Procedure 4 under valgrind memcheck: `exe __cycles` with `n` cycles; 0 bytes definitely or
/// indirectly lost, no invalid read or write, no error.
pub fn valgrind(case: &Case, exe: &Path, n: usize) -> Outcome {
    let clock = Instant::now();
    let out = Command::new("valgrind")
        .args([
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--error-exitcode=99",
        ])
        .arg(exe)
        .args(cycles_args(case, n))
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    let secs = clock.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v = parse_valgrind(&stderr)?;
    let figures = format!(
        "{n} cycles under valgrind memcheck in {secs:.1} s: definitely lost {} B, indirectly \
         lost {} B, possibly lost {} B, {} errors ({} invalid reads, {} invalid writes), exit {}",
        v.definitely_lost,
        v.indirectly_lost,
        v.possibly_lost,
        v.errors,
        v.invalid_reads,
        v.invalid_writes,
        out.status.code().unwrap_or(-1)
    );
    ensure!(
        out.status.success()
            && v.definitely_lost == 0
            && v.indirectly_lost == 0
            && v.errors == 0
            && v.invalid_reads == 0
            && v.invalid_writes == 0,
        "{figures}\n{stderr}"
    );
    Ok(figures)
}

/// Arguments of the `__unload` subcommand (the process valgrind watches).
pub fn unload_args(case: &Case, cycles: usize, states: usize) -> Vec<String> {
    vec![
        "__unload".into(),
        case.library.display().to_string(),
        case.resources.display().to_string(),
        case.guid.clone(),
        format!("{:x}", case.start.to_bits()),
        format!("{:x}", case.h.to_bits()),
        cycles.to_string(),
        states.to_string(),
    ]
}

/// The `__unload` subcommand: `cycles` times, a master that loads the library (dlopen),
/// instantiates, initializes, steps once, takes `states` FMU states (and one more by
/// deserialization) in its own memory and never frees them, frees the instance and unloads the
/// library (dlclose). fmi2FreeInstance must give every state's memory back to the master
/// (checked against the counting allocator after each cycle); valgrind checks that nothing the
/// library allocated is left behind.
pub fn run_unload_from_args(a: &[String]) -> Result<String, String> {
    ensure!(a.len() == 7, "__unload takes 7 arguments, got {}", a.len());
    let bits = |s: &str| {
        u64::from_str_radix(s, 16)
            .map(f64::from_bits)
            .map_err(|e| format!("{s}: {e}"))
    };
    let library = PathBuf::from(&a[0]);
    let location = file_uri(Path::new(&a[1]));
    let (start, h) = (bits(&a[3])?, bits(&a[4])?);
    let cycles: usize = a[5].parse().map_err(|e| format!("{}: {e}", a[5]))?;
    let states: usize = a[6].parse().map_err(|e| format!("{}: {e}", a[6]))?;
    let name = c"unload";
    let guid = std::ffi::CString::new(a[2].as_str()).map_err(|e| e.to_string())?;
    let location = std::ffi::CString::new(location).map_err(|e| e.to_string())?;
    let base = live_allocations();
    for cycle in 0..cycles {
        // SAFETY: loading the FMU's library by path, as a master does; dropped (dlclose) at
        // the end of the cycle, after its last call.
        let lib = unsafe { Fmi2Binding::new(&library) }
            .map_err(|e| format!("cannot load {}: {e}", library.display()))?;
        let cb = Box::new(callbacks(cycle, true));
        // SAFETY: FMI calls in the standard's order on the instance just made.
        unsafe {
            let c = lib.fmi2Instantiate(
                name.as_ptr(),
                fmi2Type_fmi2CoSimulation,
                guid.as_ptr(),
                location.as_ptr(),
                &*cb,
                0,
                0,
            );
            ensure!(!c.is_null(), "cycle {cycle}: fmi2Instantiate returned NULL");
            ensure!(
                lib.fmi2SetupExperiment(c, 0, 0.0, start, 0, 0.0) == OK
                    && lib.fmi2EnterInitializationMode(c) == OK
                    && lib.fmi2ExitInitializationMode(c) == OK,
                "cycle {cycle}: initialization failed"
            );
            let st = lib.fmi2DoStep(c, start, h, 1);
            ensure!(
                st == OK || st == WARNING,
                "cycle {cycle}: fmi2DoStep: {}",
                status_name(st)
            );
            let mut last: fmi2FMUstate = ptr::null_mut();
            for _ in 0..states {
                let mut s: fmi2FMUstate = ptr::null_mut();
                ensure!(lib.fmi2GetFMUstate(c, &mut s) == OK, "fmi2GetFMUstate");
                last = s;
            }
            if !last.is_null() {
                let mut size = 0usize;
                ensure!(
                    lib.fmi2SerializedFMUstateSize(c, last, &mut size) == OK,
                    "fmi2SerializedFMUstateSize"
                );
                let mut blob = vec![0u8; size];
                ensure!(
                    lib.fmi2SerializeFMUstate(c, last, blob.as_mut_ptr() as *mut c_char, size)
                        == OK,
                    "fmi2SerializeFMUstate"
                );
                let mut d: fmi2FMUstate = ptr::null_mut();
                ensure!(
                    lib.fmi2DeSerializeFMUstate(c, blob.as_ptr() as *const c_char, size, &mut d)
                        == OK,
                    "fmi2DeSerializeFMUstate"
                );
            }
            let held = live_allocations() - base;
            lib.fmi2FreeInstance(c);
            let after = live_allocations() - base;
            ensure!(
                after == 0,
                "cycle {cycle}: {held} states in the master's memory before fmi2FreeInstance, \
                 {after} after it"
            );
        }
        drop(cb);
        drop(lib);
    }
    Ok(format!(
        "{cycles} cycles of load/instantiate/{} unfreed states/free/unload",
        states + 1
    ))
}

/// Procedure 5 under valgrind memcheck: `exe __unload` (see [`run_unload_from_args`]) with
/// `cycles` load/unload cycles; 0 bytes definitely or indirectly lost (the library's registries
/// and the states its instances handed out are all gone once it is unloaded), no invalid read
/// or write, no error.
pub fn unload(case: &Case, exe: &Path, cycles: usize, states: usize) -> Outcome {
    let clock = Instant::now();
    let out = Command::new("valgrind")
        .args([
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--error-exitcode=99",
        ])
        .arg(exe)
        .args(unload_args(case, cycles, states))
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    let secs = clock.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v = parse_valgrind(&stderr)?;
    let figures = format!(
        "{cycles} load/instantiate/{states} unfreed states/free/unload cycles under valgrind \
         memcheck in {secs:.1} s: definitely lost {} B, indirectly lost {} B, possibly lost {} \
         B, {} errors ({} invalid reads, {} invalid writes), exit {}",
        v.definitely_lost,
        v.indirectly_lost,
        v.possibly_lost,
        v.errors,
        v.invalid_reads,
        v.invalid_writes,
        out.status.code().unwrap_or(-1)
    );
    ensure!(
        out.status.success()
            && v.definitely_lost == 0
            && v.indirectly_lost == 0
            && v.errors == 0
            && v.invalid_reads == 0
            && v.invalid_writes == 0,
        "{figures}\n{stderr}"
    );
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valgrind_summaries_parse() {
        let text = "==1== LEAK SUMMARY:\n==1==    definitely lost: 1,024 bytes in 2 blocks\n\
                    ==1==    indirectly lost: 0 bytes in 0 blocks\n\
                    ==1==      possibly lost: 48 bytes in 1 blocks\n\
                    ==1== Invalid read of size 8\n\
                    ==1== ERROR SUMMARY: 3 errors from 3 contexts (suppressed: 0 from 0)\n";
        let v = parse_valgrind(text).unwrap();
        assert_eq!(
            v,
            ValgrindSummary {
                definitely_lost: 1024,
                indirectly_lost: 0,
                possibly_lost: 48,
                errors: 3,
                invalid_reads: 1,
                invalid_writes: 0
            }
        );
        let clean = "==2== All heap blocks were freed -- no leaks are possible\n\
                     ==2== ERROR SUMMARY: 0 errors from 0 contexts\n";
        assert_eq!(parse_valgrind(clean).unwrap(), ValgrindSummary::default());
    }
}
