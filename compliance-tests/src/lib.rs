//! FMU compliance harness: loads Plenum's shared library by path, the way a co-simulation master
//! does, and drives it through the fmi2 C functions (FMPy tests: `python/README.md`).
//!
//! **Which library.** [`library_path`] uses `PLENUM_FMI_LIB` when it is set (a path to a
//! `libplenum.so`, e.g. the one inside a built `.fmu`). Otherwise it runs
//! `$CARGO build -p plenum --lib --message-format=json` (`--release` when the tests are built
//! without debug assertions) on this workspace and takes the `libplenum.so` that Cargo reports,
//! so the library under test is always fresh and of the tests' profile; `CARGO_TARGET_DIR` is
//! honoured because the nested Cargo inherits the environment.
//!
//! **Callbacks.** `c/callbacks.c` (compiled by `build.rs`) holds the variadic logger, which
//! formats with `vsnprintf` like a real master and hands the raw format and the formatted text
//! to [`LOG`], and a counting `calloc`/`free` pair for allocateMemory/freeMemory. Every
//! [`Fmu`] gets its own componentEnvironment, so tests running in parallel read only their own
//! log lines.

use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_int, c_long, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};

pub mod fmu;
pub mod procedures;

pub use fmi_sys::fmi2::*;

pub const OK: fmi2Status = fmi2Status_fmi2OK;
pub const WARNING: fmi2Status = fmi2Status_fmi2Warning;
pub const DISCARD: fmi2Status = fmi2Status_fmi2Discard;
pub const ERROR: fmi2Status = fmi2Status_fmi2Error;
pub const FATAL: fmi2Status = fmi2Status_fmi2Fatal;

type Sink = unsafe extern "C" fn(
    env: *mut c_void,
    instance: *const c_char,
    status: c_int,
    category: *const c_char,
    format: *const c_char,
    text: *const c_char,
);

unsafe extern "C" {
    fn plenum_test_set_sink(sink: Sink);
    fn plenum_test_logger(
        componentEnvironment: fmi2ComponentEnvironment,
        instanceName: fmi2String,
        status: fmi2Status,
        category: fmi2String,
        message: fmi2String,
        ...
    );
    fn plenum_test_calloc(nobj: usize, size: usize) -> *mut c_void;
    fn plenum_test_free(obj: *mut c_void);
    fn plenum_test_live_allocations() -> c_long;
    fn plenum_test_total_allocations() -> c_long;
}

/// One call of the master's logger.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRecord {
    pub env: usize,
    pub instance: String,
    pub status: i32,
    pub category: String,
    /// The format the FMU passed (must be "%s").
    pub format: String,
    /// The message as the master printed it.
    pub text: String,
}

/// Every log line received, from every instance.
pub static LOG: Mutex<Vec<LogRecord>> = Mutex::new(Vec::new());

thread_local! {
    /// Whether the sink prints every line the FMU logs on this thread (tests: yes, captured by
    /// the harness; the runner and the tests that feed thousands of bad blobs print only
    /// warnings and worse, see [`set_print_all_logs`]). Per thread, because the tests of one
    /// binary run on parallel threads and the FMU calls the logger on the caller's thread.
    static PRINT_ALL_LOGS: Cell<bool> = const { Cell::new(true) };
}

/// Print every log line on this thread (`true`, the default) or only warnings and worse.
pub fn set_print_all_logs(on: bool) {
    PRINT_ALL_LOGS.with(|p| p.set(on));
}

/// Forget the log lines of one instance (long runs of a master that frees its instances).
pub fn forget_logs_of(env: usize) {
    LOG.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|r| r.env != env);
}

fn lossy(p: *const c_char) -> String {
    if p.is_null() {
        "<NULL>".into()
    } else {
        // SAFETY: the C side passes NUL-terminated strings.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

unsafe extern "C" fn sink(
    env: *mut c_void,
    instance: *const c_char,
    status: c_int,
    category: *const c_char,
    format: *const c_char,
    text: *const c_char,
) {
    let rec = LogRecord {
        env: env as usize,
        instance: lossy(instance),
        status,
        category: lossy(category),
        format: lossy(format),
        text: lossy(text),
    };
    if PRINT_ALL_LOGS.try_with(Cell::get).unwrap_or(true) || rec.status >= WARNING as i32 {
        println!(
            "    [log env={} {} status={} {}] {}",
            rec.env, rec.instance, rec.status, rec.category, rec.text
        );
    }
    LOG.lock().unwrap_or_else(|e| e.into_inner()).push(rec);
}

/// FMU states currently held in master-allocated memory (allocateMemory minus freeMemory).
pub fn live_allocations() -> i64 {
    // SAFETY: plain counter read.
    unsafe { plenum_test_live_allocations() as i64 }
}

pub fn total_allocations() -> i64 {
    // SAFETY: plain counter read.
    unsafe { plenum_test_total_allocations() as i64 }
}

/// The `libplenum.so` under test (see the module doc).
pub fn library_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(p) = std::env::var_os("PLENUM_FMI_LIB") {
            let p = PathBuf::from(p);
            println!("library under test (PLENUM_FMI_LIB): {}", p.display());
            return p;
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "plenum", "--lib", "--message-format=json"])
            .arg("--manifest-path")
            .arg(&manifest);
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("cannot run cargo to build libplenum");
        assert!(
            out.status.success(),
            "cargo build -p plenum --lib failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let file = format!(
            "{}plenum{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let found = stdout
            .lines()
            .filter(|l| l.contains("\"compiler-artifact\"") && l.contains("\"filenames\""))
            .flat_map(|l| l.split('"'))
            .find(|s| s.ends_with(&format!("/{file}")))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("cargo reported no {file}:\n{stdout}"));
        println!("library under test (cargo build): {}", found.display());
        found
    })
    .clone()
}

/// Connect the C logger to [`LOG`] (once per process).
fn install_sink() {
    static SINK: Once = Once::new();
    // SAFETY: the sink is a plain function with the C signature.
    SINK.call_once(|| unsafe { plenum_test_set_sink(sink) });
}

/// Load a shared library by path (dlopen) and resolve the fmi2 functions; it stays loaded for
/// the rest of the process (a master that unloads would dlclose; the states registry of the
/// library must not outlive it).
pub fn load_library(path: &Path) -> Result<&'static Fmi2Binding, String> {
    install_sink();
    // SAFETY: loading an FMU's library; its initializers are Rust's.
    let lib = unsafe { Fmi2Binding::new(path) }
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    let lib: &'static Fmi2Binding = Box::leak(Box::new(lib));
    // Kept reachable (a leak checker sees the bindings as still in use, not lost).
    static LOADED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    LOADED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(lib as *const Fmi2Binding as usize);
    Ok(lib)
}

/// The library, loaded once for the whole test binary.
pub fn library() -> &'static Fmi2Binding {
    static LIB: OnceLock<&'static Fmi2Binding> = OnceLock::new();
    LIB.get_or_init(|| {
        let path = library_path();
        load_library(&path).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// A model text with `method = "..."` replaced.
pub fn with_method(model: &str, method: &str) -> String {
    let mut out = String::new();
    for line in model.lines() {
        if line.trim_start().starts_with("method") {
            out.push_str(&format!("method = \"{method}\""));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The text of a shipped model.
pub fn shipped_model(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models")
        .join(format!("{name}.toml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// An unpacked FMU's `resources/` directory holding one model.toml (removed on drop).
pub struct ModelDir {
    pub root: PathBuf,
    pub resources: PathBuf,
    pub guid: String,
    pub text: String,
}

impl ModelDir {
    /// Write `text` to `<tmp>/<tag>/resources/model.toml` (`tag` may contain spaces and '%').
    pub fn new(tag: &str, text: &str) -> ModelDir {
        Self::with_bytes(tag, text.as_bytes())
    }

    pub fn with_bytes(tag: &str, bytes: &[u8]) -> ModelDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!(
            "plenum-compliance-{}-{n}-{tag}",
            std::process::id()
        ));
        let resources = root.join("resources");
        std::fs::create_dir_all(&resources).expect("temp dir");
        std::fs::write(resources.join("model.toml"), bytes).expect("write model.toml");
        ModelDir {
            guid: plenum::cosim::guid_of(bytes),
            text: String::from_utf8_lossy(bytes).into_owned(),
            root,
            resources,
        }
    }

    /// `file:///...` with every byte outside the unreserved set percent-encoded.
    pub fn uri(&self) -> String {
        file_uri(&self.resources)
    }
}

/// `file:///.../` of a directory, every byte outside the unreserved set percent-encoded (on
/// Windows `file:///C:/dir/`, the separators as '/').
pub fn file_uri(dir: &Path) -> String {
    let mut s = String::from("file://");
    let path = dir.to_string_lossy();
    let path = if cfg!(windows) {
        // \\?\C:\dir (a canonical path) and C:\dir both become /C:/dir.
        let p = path.trim_start_matches(r"\\?\").replace('\\', "/");
        s.push('/');
        s.push_str(&p[..p.find('/').unwrap_or(p.len())]);
        p[p.find('/').unwrap_or(p.len())..].to_string()
    } else {
        path.into_owned()
    };
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.push('/');
    s
}

impl Drop for ModelDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Callbacks with the C logger and counting allocator; `env` identifies the instance.
pub fn callbacks(env: usize, with_allocator: bool) -> fmi2CallbackFunctions {
    fmi2CallbackFunctions {
        logger: Some(plenum_test_logger),
        allocateMemory: if with_allocator {
            Some(plenum_test_calloc)
        } else {
            None
        },
        freeMemory: if with_allocator {
            Some(plenum_test_free)
        } else {
            None
        },
        stepFinished: None,
        componentEnvironment: env as *mut c_void,
    }
}

fn next_env() -> usize {
    static ENV: AtomicUsize = AtomicUsize::new(1000);
    ENV.fetch_add(1, Ordering::Relaxed)
}

/// An instance of the FMU under test (freed on drop).
pub struct Fmu {
    pub lib: &'static Fmi2Binding,
    pub c: fmi2Component,
    pub env: usize,
    /// Kept alive for the instance's lifetime (the FMU may keep pointers into it).
    _callbacks: Box<fmi2CallbackFunctions>,
    pub n_variables: usize,
    pub n_outputs: usize,
    /// Value references read by [`Fmu::outputs_bits`] (`time` and the outputs).
    pub outputs: Vec<u32>,
}

/// The value reference of variable `name` of a model text (its FMU's, as `describe` numbers
/// them).
pub fn value_reference(model_text: &str, name: &str) -> u32 {
    let loaded =
        plenum::model::parse_str(model_text, "model.toml", &[]).unwrap_or_else(|e| panic!("{e:?}"));
    plenum::cosim::describe(&loaded)
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .value_reference
}

/// fmi2Instantiate with explicit arguments; `None` → NULL. Returns the component and its env.
pub fn instantiate_raw(
    instance_name: Option<&str>,
    fmu_type: fmi2Type,
    guid: Option<&str>,
    location: Option<&str>,
    with_allocator: bool,
) -> (fmi2Component, usize, Box<fmi2CallbackFunctions>) {
    instantiate_with(
        library(),
        instance_name,
        fmu_type,
        guid,
        location,
        with_allocator,
        true,
    )
}

/// fmi2Instantiate of `lib` (visible = false); `None` → NULL.
pub fn instantiate_with(
    lib: &'static Fmi2Binding,
    instance_name: Option<&str>,
    fmu_type: fmi2Type,
    guid: Option<&str>,
    location: Option<&str>,
    with_allocator: bool,
    logging_on: bool,
) -> (fmi2Component, usize, Box<fmi2CallbackFunctions>) {
    let env = next_env();
    let cb = Box::new(callbacks(env, with_allocator));
    let name = instance_name.map(|s| CString::new(s).expect("name"));
    let guid = guid.map(|s| CString::new(s).expect("guid"));
    let loc = location.map(|s| CString::new(s).expect("location"));
    let p = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: FMI call with valid (or deliberately NULL) arguments.
    let c = unsafe {
        lib.fmi2Instantiate(
            p(&name),
            fmu_type,
            p(&guid),
            p(&loc),
            &*cb,
            0,
            fmi2Boolean::from(logging_on),
        )
    };
    (c, env, cb)
}

/// Log lines of one instance (by its componentEnvironment).
pub fn logs_of(env: usize) -> Vec<LogRecord> {
    LOG.lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|r| r.env == env)
        .cloned()
        .collect()
}

// State handles go to the library, which checks them against its registry before any use (and
// the tests pass bad ones on purpose): passing a raw handle is not a dereference here.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl Fmu {
    /// Instantiate `model` as Co-Simulation with logging on and the counting allocator.
    pub fn new(model: &ModelDir) -> Fmu {
        Self::with_options(model, true)
    }

    pub fn with_options(model: &ModelDir, with_allocator: bool) -> Fmu {
        Self::of_type(model, with_allocator, fmi2Type_fmi2CoSimulation)
    }

    /// Instantiate `model` as Model Exchange with logging on and the counting allocator.
    pub fn model_exchange(model: &ModelDir) -> Fmu {
        Self::of_type(model, true, fmi2Type_fmi2ModelExchange)
    }

    fn of_type(model: &ModelDir, with_allocator: bool, fmu_type: fmi2Type) -> Fmu {
        let (c, env, cb) = instantiate_raw(
            Some("plenum under test"),
            fmu_type,
            Some(&model.guid),
            Some(&model.uri()),
            with_allocator,
        );
        assert!(!c.is_null(), "fmi2Instantiate failed: {:?}", logs_of(env));
        let loaded = plenum::model::parse_str(&model.text, "model.toml", &[])
            .unwrap_or_else(|e| panic!("{e:?}"));
        let d = plenum::cosim::describe(&loaded);
        let n_outputs = d
            .variables
            .iter()
            .filter(|v| {
                matches!(
                    v.causality,
                    plenum::cosim::Causality::Output | plenum::cosim::Causality::Independent
                )
            })
            .count();
        Fmu {
            lib: library(),
            c,
            env,
            _callbacks: cb,
            n_variables: d.variables.len(),
            n_outputs,
            outputs: (0..n_outputs as u32).collect(),
        }
    }

    /// Instantiate `lib` as a master does, from what modelDescription.xml says: the GUID, the
    /// resources directory, and the value references to read as outputs. logCalls and logEvents
    /// are off (loggingOn = false); warnings and errors are logged.
    pub fn from_description(
        lib: &'static Fmi2Binding,
        instance_name: &str,
        guid: &str,
        resources: &Path,
        outputs: &[u32],
    ) -> Result<Fmu, String> {
        let (c, env, cb) = instantiate_with(
            lib,
            Some(instance_name),
            fmi2Type_fmi2CoSimulation,
            Some(guid),
            Some(&file_uri(resources)),
            true,
            false,
        );
        if c.is_null() {
            let why: Vec<String> = logs_of(env).into_iter().map(|r| r.text).collect();
            return Err(format!("fmi2Instantiate returned NULL: {}", why.join("; ")));
        }
        Ok(Fmu {
            lib,
            c,
            env,
            _callbacks: cb,
            n_variables: 0,
            n_outputs: outputs.len(),
            outputs: outputs.to_vec(),
        })
    }

    pub fn logs(&self) -> Vec<LogRecord> {
        logs_of(self.env)
    }

    /// Instantiated → setupExperiment(start) → initialization mode → stepComplete.
    pub fn initialize(&self, start: f64) {
        // SAFETY: FMI calls on a live instance (here and in every method below).
        unsafe {
            assert_eq!(
                self.lib.fmi2SetupExperiment(self.c, 0, 0.0, start, 0, 0.0),
                OK
            );
            assert_eq!(self.lib.fmi2EnterInitializationMode(self.c), OK);
            assert_eq!(self.lib.fmi2ExitInitializationMode(self.c), OK);
        }
    }

    pub fn do_step(&self, t: f64, h: f64) -> fmi2Status {
        unsafe { self.lib.fmi2DoStep(self.c, t, h, 1) }
    }

    pub fn get_real(&self, vrs: &[u32]) -> (fmi2Status, Vec<f64>) {
        let mut v = vec![f64::NAN; vrs.len()];
        let s = unsafe {
            self.lib
                .fmi2GetReal(self.c, vrs.as_ptr(), vrs.len(), v.as_mut_ptr())
        };
        (s, v)
    }

    pub fn set_real(&self, vrs: &[u32], values: &[f64]) -> fmi2Status {
        assert_eq!(vrs.len(), values.len());
        unsafe {
            self.lib
                .fmi2SetReal(self.c, vrs.as_ptr(), vrs.len(), values.as_ptr())
        }
    }

    /// Every output ([`Fmu::outputs`]) as bit patterns.
    pub fn outputs_bits(&self) -> Vec<u64> {
        let (s, v) = self.get_real(&self.outputs);
        assert_eq!(s, OK, "fmi2GetReal of all outputs");
        v.iter().map(|x| x.to_bits()).collect()
    }

    pub fn get_state(&self, state: &mut fmi2FMUstate) -> fmi2Status {
        unsafe { self.lib.fmi2GetFMUstate(self.c, state) }
    }

    pub fn set_state(&self, state: fmi2FMUstate) -> fmi2Status {
        unsafe { self.lib.fmi2SetFMUstate(self.c, state) }
    }

    pub fn free_state(&self, state: &mut fmi2FMUstate) -> fmi2Status {
        unsafe { self.lib.fmi2FreeFMUstate(self.c, state) }
    }

    pub fn serialize(&self, state: fmi2FMUstate) -> Vec<u8> {
        let mut size = 0usize;
        unsafe {
            assert_eq!(
                self.lib
                    .fmi2SerializedFMUstateSize(self.c, state, &mut size),
                OK
            );
            let mut buf = vec![0u8; size];
            assert_eq!(
                self.lib.fmi2SerializeFMUstate(
                    self.c,
                    state,
                    buf.as_mut_ptr() as *mut c_char,
                    size
                ),
                OK
            );
            buf
        }
    }

    pub fn deserialize(&self, blob: &[u8], state: &mut fmi2FMUstate) -> fmi2Status {
        unsafe {
            self.lib.fmi2DeSerializeFMUstate(
                self.c,
                blob.as_ptr() as *const c_char,
                blob.len(),
                state,
            )
        }
    }

    pub fn last_successful_time(&self) -> (fmi2Status, f64) {
        let mut t = f64::NAN;
        let s = unsafe {
            self.lib
                .fmi2GetRealStatus(self.c, fmi2StatusKind_fmi2LastSuccessfulTime, &mut t)
        };
        (s, t)
    }

    pub fn terminated(&self) -> (fmi2Status, bool) {
        let mut b: fmi2Boolean = -1;
        let s = unsafe {
            self.lib
                .fmi2GetBooleanStatus(self.c, fmi2StatusKind_fmi2Terminated, &mut b)
        };
        (s, b != 0)
    }

    /// Model Exchange: setupExperiment(start) → initialization → event mode → the event
    /// iteration → continuous-time mode. Returns the next time event, if any.
    pub fn initialize_model_exchange(&self, start: f64) -> Option<f64> {
        unsafe {
            assert_eq!(
                self.lib.fmi2SetupExperiment(self.c, 0, 0.0, start, 0, 0.0),
                OK
            );
            assert_eq!(self.lib.fmi2EnterInitializationMode(self.c), OK);
            assert_eq!(self.lib.fmi2ExitInitializationMode(self.c), OK);
        }
        let info = self.new_discrete_states();
        assert_eq!(unsafe { self.lib.fmi2EnterContinuousTimeMode(self.c) }, OK);
        (info.nextEventTimeDefined != 0).then_some(info.nextEventTime)
    }

    /// fmi2NewDiscreteStates, which must return fmi2OK.
    pub fn new_discrete_states(&self) -> fmi2EventInfo {
        let mut info = fmi2EventInfo {
            newDiscreteStatesNeeded: 0,
            terminateSimulation: 0,
            nominalsOfContinuousStatesChanged: 0,
            valuesOfContinuousStatesChanged: 0,
            nextEventTimeDefined: 0,
            nextEventTime: 0.0,
        };
        let s = unsafe { self.lib.fmi2NewDiscreteStates(self.c, &mut info) };
        assert!(s == OK || s == WARNING, "fmi2NewDiscreteStates: {s}");
        info
    }

    /// Model Exchange: the `n` continuous states.
    pub fn states(&self, n: usize) -> Vec<f64> {
        let mut x = vec![f64::NAN; n];
        let s = unsafe { self.lib.fmi2GetContinuousStates(self.c, x.as_mut_ptr(), n) };
        assert_eq!(s, OK, "fmi2GetContinuousStates");
        x
    }

    /// Model Exchange: fmi2GetDerivatives (status, values).
    pub fn derivatives(&self, n: usize) -> (fmi2Status, Vec<f64>) {
        let mut dx = vec![f64::NAN; n];
        let s = unsafe { self.lib.fmi2GetDerivatives(self.c, dx.as_mut_ptr(), n) };
        (s, dx)
    }

    /// Model Exchange: one forward Euler step of `h` from `t` (setTime, setContinuousStates,
    /// completedIntegratorStep, and the event iteration where the FMU asks for one). Returns
    /// the completed step's status and whether the run was asked to end.
    pub fn euler_step(&self, t: &mut f64, h: f64, n: usize) -> (fmi2Status, bool) {
        let x = self.states(n);
        let (s, dx) = self.derivatives(n);
        assert_eq!(s, OK, "fmi2GetDerivatives at t = {t}");
        let x: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + h * b).collect();
        *t += h;
        unsafe {
            assert_eq!(self.lib.fmi2SetTime(self.c, *t), OK);
            assert_eq!(self.lib.fmi2SetContinuousStates(self.c, x.as_ptr(), n), OK);
            let (mut enter, mut terminate) = (0, 0);
            let s = self
                .lib
                .fmi2CompletedIntegratorStep(self.c, 1, &mut enter, &mut terminate);
            if terminate != 0 || s > WARNING {
                return (s, true);
            }
            if enter != 0 {
                assert_eq!(self.lib.fmi2EnterEventMode(self.c), OK);
                let info = self.new_discrete_states();
                if info.terminateSimulation != 0 {
                    return (s, true);
                }
                assert_eq!(self.lib.fmi2EnterContinuousTimeMode(self.c), OK);
            }
            (s, false)
        }
    }

    /// The FMU's time (output `time`, value reference 0).
    pub fn time(&self) -> f64 {
        let (s, v) = self.get_real(&[0]);
        assert_eq!(s, OK);
        v[0]
    }
}

impl Drop for Fmu {
    fn drop(&mut self) {
        // SAFETY: the instance is live until here.
        unsafe { self.lib.fmi2FreeInstance(self.c) };
    }
}

// SAFETY: an instance may move between threads as long as one thread at a time calls it
// (FMI 2.0 §2.1.5); `&Fmu` is not shared across threads by the harness.
unsafe impl Send for Fmu {}
