//! The shipped libraries (`scripts/build-fmu-libs.sh`, profile `fmu`) and the FMUs that carry
//! them: exports, glibc baseline, Windows imports and sizes, each read by fmu-build's own reader
//! and checked against binutils (`nm`, `objdump`) as an independent reader; and `fmu-build`'s
//! library search and refusals, run as a user runs it.
//!
//! A platform whose library is not built is skipped with a message, unless
//! `PLENUM_FMU_PLATFORMS` names it (scripts/test.sh sets `linux64,win64`): then it must be there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fmu_build::platform::{self, GLIBC_BASELINE, Library, Platform};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The shipped library of `p`, or None (skipped) when it is not built and not required.
fn shipped(p: Platform) -> Option<Library> {
    let dirs = platform::target_dirs();
    match platform::find(p, &dirs) {
        Ok(path) => Some(Library::load(&path, Some(p)).unwrap_or_else(|e| panic!("{e}"))),
        Err(looked) => {
            let required = std::env::var("PLENUM_FMU_PLATFORMS").unwrap_or_default();
            assert!(
                !required.split(',').any(|r| r.trim() == p.fmi2_folder()),
                "PLENUM_FMU_PLATFORMS={required} requires the {p} library; looked at {looked:?} \
                 (bash scripts/build-fmu-libs.sh builds it)"
            );
            println!(
                "SKIPPED {p}: not built (looked at {looked:?}; bash scripts/build-fmu-libs.sh)"
            );
            None
        }
    }
}

fn run(cmd: &mut Command) -> Output {
    // A copied executable is busy (ETXTBSY) while another test thread's child, forked during
    // the copy, still holds it open for writing: until that child execs, a moment.
    let mut tries = 0;
    let out = loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => break r.unwrap_or_else(|e| panic!("{cmd:?}: {e}")),
        }
    };
    println!(
        "$ {cmd:?} → {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Names binutils lists as exported: `nm -D --defined-only` (ELF), the export name table of
/// `objdump -p` (PE).
fn binutils_exports(p: Platform, path: &Path) -> Option<BTreeSet<String>> {
    let out = match p {
        Platform::Linux64 => Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(path)
            .output(),
        Platform::Win64 => Command::new("x86_64-w64-mingw32-objdump")
            .arg("-p")
            .arg(path)
            .output(),
    }
    .ok()
    .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(match p {
        Platform::Linux64 => text
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 3 && f[1] == "T").then(|| f[2].to_string())
            })
            .collect(),
        Platform::Win64 => text
            .split("[Ordinal/Name Pointer] Table")
            .nth(1)?
            .lines()
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter_map(|l| l.split(']').nth(1).map(|n| n.trim().to_string()))
            .collect(),
    })
}

#[test]
fn shipped_libraries_export_the_fmi2_and_fmi3_functions_and_nothing_else() {
    let want: BTreeSet<String> = platform::fmi_functions().map(|s| s.to_string()).collect();
    let mut checked = 0;
    for p in Platform::ALL {
        let Some(lib) = shipped(p) else { continue };
        let got: BTreeSet<String> = lib.info.exports.iter().cloned().collect();
        let (extra, missing) = lib.info.export_mismatch();
        println!(
            "{p}: {} exports, {} fmi2 and fmi3 functions; extra {extra:?}, missing {missing:?}",
            got.len(),
            want.len()
        );
        assert_eq!(got, want, "{p}: {}", lib.path.display());
        match binutils_exports(p, &lib.path) {
            Some(b) => {
                println!("{p}: binutils lists {} exports", b.len());
                assert_eq!(b, want, "{p}: binutils' reading");
            }
            None => println!("{p}: binutils not available for the cross-check"),
        }
        checked += 1;
    }
    // The control: a cdylib built without the export filter (the debug build) exports fmi-sys'
    // `callback_log` as well, so the filter is what hides it.
    let debug = workspace().join("target/debug/libplenum.so");
    if let Ok(lib) = Library::load(&debug, Some(Platform::Linux64)) {
        let (extra, _) = lib.info.export_mismatch();
        println!("control, {}: extra exports {extra:?}", debug.display());
        assert!(extra.contains(&"callback_log"), "{extra:?}");
    }
    println!("{checked} platforms checked");
}

/// The newest `GLIBC_x.y` in `objdump -T`'s version column.
fn objdump_newest_glibc(path: &Path) -> Option<(u32, u32)> {
    let out = Command::new("objdump").arg("-T").arg(path).output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|w| w.strip_prefix("GLIBC_"))
        .filter_map(|v| {
            let mut it = v.split('.');
            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
        })
        .max()
}

#[test]
fn linux64_library_needs_no_glibc_symbol_above_2_17() {
    let Some(lib) = shipped(Platform::Linux64) else {
        return;
    };
    let newest = lib.info.newest_glibc.expect("a glibc version");
    println!(
        "{}: newest GLIBC_ symbol version {}.{} (baseline {}.{}); needs {:?}",
        lib.path.display(),
        newest.0,
        newest.1,
        GLIBC_BASELINE.0,
        GLIBC_BASELINE.1,
        lib.info.needs
    );
    assert!(newest <= GLIBC_BASELINE, "{newest:?}");
    assert!(lib.glibc_note().is_none());
    if let Some(o) = objdump_newest_glibc(&lib.path) {
        println!("objdump -T: newest GLIBC_{}.{}", o.0, o.1);
        assert_eq!(o, newest);
    }
    // The control: the native build of this machine needs a newer glibc (hypot@GLIBC_2.35 on
    // Debian 12), which the same reader sees.
    let debug = workspace().join("target/debug/libplenum.so");
    if let Ok(native) = Library::load(&debug, Some(Platform::Linux64)) {
        let n = native.info.newest_glibc.expect("a glibc version");
        println!(
            "control, native {}: newest GLIBC_{}.{}",
            debug.display(),
            n.0,
            n.1
        );
        assert_eq!(Some(n), objdump_newest_glibc(&debug));
        if n > GLIBC_BASELINE {
            assert!(native.glibc_note().is_some());
        }
    }
}

/// System DLLs of every Windows 10 (and the API sets they forward).
fn windows10_dll(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "kernel32.dll",
        "ntdll.dll",
        "msvcrt.dll",
        "advapi32.dll",
        "userenv.dll",
        "ws2_32.dll",
        "bcrypt.dll",
        "bcryptprimitives.dll",
        "user32.dll",
        "shell32.dll",
        "ole32.dll",
    ]
    .contains(&n.as_str())
        || n.starts_with("api-ms-win-core-")
}

#[test]
fn win64_library_needs_only_dlls_every_windows_10_has() {
    let Some(lib) = shipped(Platform::Win64) else {
        return;
    };
    println!("{}: imports {:?}", lib.path.display(), lib.info.needs);
    let foreign: Vec<&String> = lib
        .info
        .needs
        .iter()
        .filter(|d| !windows10_dll(d))
        .collect();
    assert!(foreign.is_empty(), "not part of Windows 10: {foreign:?}");
    assert!(
        !lib.info
            .needs
            .iter()
            .any(|d| d.to_ascii_lowercase().contains("gcc") || d.contains("pthread")),
        "a MinGW runtime DLL: {:?}",
        lib.info.needs
    );
    // objdump's reading of the import table agrees.
    if let Ok(out) = Command::new("x86_64-w64-mingw32-objdump")
        .arg("-p")
        .arg(&lib.path)
        .output()
    {
        let listed: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().strip_prefix("DLL Name: ").map(str::to_string))
            .collect();
        println!("objdump -p: {listed:?}");
        assert_eq!(listed, lib.info.needs.iter().cloned().collect());
    }
}

fn fmu_build() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fmu-build"));
    c.current_dir(workspace());
    c
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fmu-build-platforms-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn entries(fmu: &Path) -> Vec<String> {
    let zip = zip::ZipArchive::new(std::fs::File::open(fmu).unwrap()).unwrap();
    zip.file_names().map(str::to_string).collect()
}

/// `fmu-build models/projectile.toml` packs every built platform by default, names the others,
/// and the FMUs stay within their size targets (≤ 4.5 MB with both platforms, ≤ 2.1 MB with linux64
/// alone).
#[test]
fn fmus_carry_every_built_platform_within_the_size_targets() {
    let (Some(linux), win) = (shipped(Platform::Linux64), shipped(Platform::Win64)) else {
        return;
    };
    let out = tmp("sizes");
    let o = run(fmu_build().args(["models/projectile.toml", "-o"]).arg(&out));
    assert!(o.status.success());
    let fmu = out.join("projectile.fmu");
    let names = entries(&fmu);
    assert!(names.contains(&"binaries/linux64/projectile.so".to_string()));
    assert_eq!(
        names.contains(&"binaries/win64/projectile.dll".to_string()),
        win.is_some(),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("bcryptprimitives")));
    let both = std::fs::metadata(&fmu).unwrap().len();
    let o = run(fmu_build()
        .args(["models/projectile.toml", "--platforms", "linux64", "-o"])
        .arg(out.join("linux")));
    assert!(o.status.success());
    let linux_only = std::fs::metadata(out.join("linux/projectile.fmu"))
        .unwrap()
        .len();
    println!(
        "library linux64 {} (stripped), win64 {}; projectile.fmu: {} with {}, {} with linux64 \
         alone (targets 4.5 MB and 2.1 MB)",
        platform::megabytes(linux.bytes.len() as u64),
        win.as_ref()
            .map_or("not built".into(), |w| platform::megabytes(
                w.bytes.len() as u64
            )),
        platform::megabytes(both),
        if win.is_some() {
            "both platforms"
        } else {
            "linux64"
        },
        platform::megabytes(linux_only)
    );
    assert!(linux_only <= 2_100_000, "{linux_only} bytes");
    if win.is_some() {
        assert!(both <= 4_500_000, "{both} bytes");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// A Plenum library for linux64 to place where fmu-build looks: the shipped build, else the
/// workspace's plain debug build (a cdylib of the same functions).
fn some_linux_library() -> Option<Library> {
    shipped(Platform::Linux64).or_else(|| {
        let debug = workspace().join("target/debug/libplenum.so");
        let lib = Library::load(&debug, Some(Platform::Linux64)).ok();
        if lib.is_none() {
            println!("SKIPPED: neither the shipped nor the debug linux64 library is built");
        }
        lib
    })
}

/// The bytes the FMU carries for `platform`.
fn packed(fmu: &Path, name: &str) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(fmu).unwrap()).unwrap();
    let mut entry = zip.by_name(name).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
    bytes
}

/// `fmu-build` run as `exe`, from `cwd`, with neither CARGO_TARGET_DIR nor PLENUM_FMU_LIBS
/// unless `env` sets them.
fn run_at(exe: &Path, cwd: &Path, args: &[&Path], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(exe);
    c.args(args)
        .current_dir(cwd)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("PLENUM_FMU_LIBS");
    for (k, v) in env {
        c.env(k, v);
    }
    run(&mut c)
}

/// A copy of fmu-build outside any build tree finds no library through a path baked in at
/// compile time: it says every place it looked and how to give it one; with `CARGO_TARGET_DIR`
/// it finds what is there, packs it, and names the platform it left out.
#[test]
fn a_copied_fmu_build_looks_where_it_is_told_and_says_where_it_looked() {
    let Some(linux) = some_linux_library() else {
        return;
    };
    let dir = tmp("copied");
    let exe = dir.join("fmu-build");
    std::fs::copy(env!("CARGO_BIN_EXE_fmu-build"), &exe).unwrap();
    let model = workspace().join("models/two_tanks.toml");
    let out = dir.join("out");

    // Nothing anywhere.
    let o = run_at(&exe, &dir, &[&model, Path::new("-o"), &out], &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    let beside = dir
        .parent()
        .unwrap()
        .join("lib/plenum/linux64/libplenum.so");
    for said in [
        beside.display().to_string().as_str(),
        "PLENUM_FMU_LIBS is not set",
        "no Cargo target directory",
        "--lib",
        "no Plenum library found for any platform",
    ] {
        assert!(err.contains(said), "{said:?} not in: {err}");
    }
    assert!(!out.join("two_tanks.fmu").exists());

    // An invalid model is reported as such before the library lookup: exit 2 (invalid input),
    // not the lookup's 1, alone or beside a valid model.
    let invalid = dir.join("invalid.toml");
    std::fs::write(
        &invalid,
        "[model]\nname = \"x\"\n[[components]]\nkind = \"nonsense\"\n",
    )
    .unwrap();
    for args in [vec![&invalid], vec![&invalid, &model]] {
        let mut args: Vec<&Path> = args.iter().map(|p| p.as_path()).collect();
        args.extend([Path::new("-o"), &out]);
        let o = run_at(&exe, &dir, &args, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        println!(
            "{} model(s), one invalid, no library: exit {:?}",
            args.len() - 2,
            o.status.code()
        );
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("invalid.toml: invalid model"), "{err}");
        assert!(!out.join("two_tanks.fmu").exists());
    }

    // A target directory with the linux64 library only.
    let target = dir.join("target");
    let lib = target.join("x86_64-unknown-linux-gnu/fmu/libplenum.so");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    std::fs::copy(&linux.path, &lib).unwrap();
    let o = run_at(
        &exe,
        &dir,
        &[&model, Path::new("-o"), &out],
        &[("CARGO_TARGET_DIR", &target)],
    );
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let looked = target.join("x86_64-pc-windows-gnu/fmu/plenum.dll");
    assert!(
        err.contains("win64 skipped") && err.contains(&looked.display().to_string()),
        "{err}"
    );
    assert_eq!(
        entries(&out.join("two_tanks.fmu")),
        [
            "modelDescription.xml",
            "binaries/linux64/two_tanks.so",
            "resources/model.toml"
        ]
    );
    // Asked for explicitly, the missing platform is an error naming the path.
    let o = run_at(
        &exe,
        &dir,
        &[
            &model,
            Path::new("--platforms"),
            Path::new("linux64,win64"),
            Path::new("-o"),
            &dir.join("out2"),
        ],
        &[("CARGO_TARGET_DIR", &target)],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&looked.display().to_string()), "{err}");
    assert!(!dir.join("out2").join("two_tanks.fmu").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Installed as a package installs it (`<prefix>/bin/fmu-build`, `cargo install --root
/// <prefix>` puts it there too) with the libraries in `<prefix>/lib/plenum/<platform>/`,
/// fmu-build packs them from any directory; `PLENUM_FMU_LIBS` names another folder of the same
/// layout and comes first. The FMU carries the very bytes of the library found.
#[test]
fn an_installed_fmu_build_packs_the_libraries_beside_it_or_named_by_plenum_fmu_libs() {
    let Some(linux) = some_linux_library() else {
        return;
    };
    let dir = tmp("installed");
    let prefix = dir.join("prefix");
    let exe = prefix.join("bin/fmu-build");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_fmu-build"), &exe).unwrap();
    let installed = prefix.join("lib/plenum/linux64/libplenum.so");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    std::fs::copy(&linux.path, &installed).unwrap();
    let model = workspace().join("models/two_tanks.toml");
    let elsewhere = dir.join("work");
    std::fs::create_dir_all(&elsewhere).unwrap();

    let out = dir.join("out");
    let o = run_at(&exe, &elsewhere, &[&model, Path::new("-o"), &out], &[]);
    assert!(o.status.success());
    let fmu = out.join("two_tanks.fmu");
    let bytes = packed(&fmu, "binaries/linux64/two_tanks.so");
    println!(
        "beside the executable: packed {} bytes, equal to {}: {}",
        bytes.len(),
        installed.display(),
        bytes == linux.bytes
    );
    assert!(bytes == linux.bytes);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            &prefix
                .join("lib/plenum/win64/plenum.dll")
                .display()
                .to_string()
        ),
        "{err}"
    );

    // PLENUM_FMU_LIBS first: a different library there (the other build of the two, or the
    // same bytes when only one is built) is the one packed.
    let other_dir = dir.join("libs");
    let other = other_dir.join("linux64/libplenum.so");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    let debug = workspace().join("target/debug/libplenum.so");
    let source = if debug.is_file() && debug != linux.path {
        debug
    } else {
        linux.path.clone()
    };
    std::fs::copy(&source, &other).unwrap();
    let want = std::fs::read(&other).unwrap();
    let out2 = dir.join("out2");
    let o = run_at(
        &exe,
        &elsewhere,
        &[&model, Path::new("-o"), &out2],
        &[("PLENUM_FMU_LIBS", &other_dir)],
    );
    assert!(o.status.success());
    let bytes = packed(&out2.join("two_tanks.fmu"), "binaries/linux64/two_tanks.so");
    println!(
        "PLENUM_FMU_LIBS: packed {} bytes, equal to {} ({}): {}; differs from the installed one: {}",
        bytes.len(),
        other.display(),
        source.display(),
        bytes == want,
        bytes != linux.bytes
    );
    assert!(bytes == want);
    if source != linux.path {
        assert!(bytes != linux.bytes, "the installed library was packed");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// After a plain `cargo build [--release] --workspace` (no shipped build), fmu-build finds the
/// plain build's library in its own target directory and packs it with a note saying so.
#[test]
fn fmu_build_in_a_plain_build_tree_packs_that_build_with_a_note() {
    let Some(linux) = some_linux_library() else {
        return;
    };
    let dir = tmp("plain");
    let target = dir.join("target");
    let release = target.join("release");
    std::fs::create_dir_all(&release).unwrap();
    // What cargo leaves in every target directory (the mark fmu-build recognises one by).
    std::fs::write(
        target.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    let exe = release.join("fmu-build");
    std::fs::copy(env!("CARGO_BIN_EXE_fmu-build"), &exe).unwrap();
    let lib = release.join("libplenum.so");
    std::fs::copy(&linux.path, &lib).unwrap();
    let elsewhere = dir.join("work");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let model = workspace().join("models/two_tanks.toml");
    let out = dir.join("out");
    let o = run_at(&exe, &elsewhere, &[&model, Path::new("-o"), &out], &[]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("packing the plain Cargo build") && err.contains(&lib.display().to_string()),
        "{err}"
    );
    let bytes = packed(&out.join("two_tanks.fmu"), "binaries/linux64/two_tanks.so");
    assert!(bytes == linux.bytes);
    println!(
        "plain build: packed {} bytes of {}",
        bytes.len(),
        lib.display()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--lib` accepts only a shared library for the platform its headers name that exports the
/// fmi2 functions: a model file, an empty file, a library of another machine, another shared
/// library, and two libraries of one platform are refused, and nothing is written.
#[test]
fn lib_must_be_a_plenum_library_for_its_platform() {
    let dir = tmp("libs");
    let text = dir.join("base.toml");
    std::fs::copy(workspace().join("models/two_tanks.toml"), &text).unwrap();
    let empty = dir.join("empty.so");
    std::fs::write(&empty, b"").unwrap();
    let mut cases: Vec<(Vec<PathBuf>, &str)> = vec![
        (vec![text.clone()], "not a shared library"),
        (vec![empty.clone()], "not a shared library"),
    ];
    let libm = ["/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if let Some(libm) = &libm {
        cases.push((vec![libm.clone()], "not a Plenum FMU library"));
    }
    if let Some(linux) = shipped(Platform::Linux64) {
        // The same library with e_machine set to AArch64 (183).
        let mut bytes = linux.bytes.clone();
        bytes[18..20].copy_from_slice(&183u16.to_le_bytes());
        let arm = dir.join("libarm.so");
        std::fs::write(&arm, bytes).unwrap();
        cases.push((vec![arm], "not x86-64"));
        cases.push((
            vec![linux.path.clone(), linux.path.clone()],
            "two linux64 libraries",
        ));
    }
    for (libs, why) in cases {
        let mut cmd = fmu_build();
        cmd.arg(&text).arg("-o").arg(dir.join("out"));
        for l in &libs {
            cmd.arg("--lib").arg(l);
        }
        let o = run(&mut cmd);
        assert_eq!(o.status.code(), Some(1), "{libs:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(why), "{libs:?}: expected {why:?} in {err}");
        assert!(!dir.join("out/two_tanks.fmu").exists());
    }
    if let Some(win) = shipped(Platform::Win64) {
        // A win64 library where only linux64 is asked for.
        let o = run(fmu_build()
            .arg(&text)
            .args(["--platforms", "linux64", "--lib"])
            .arg(&win.path)
            .arg("-o")
            .arg(dir.join("out")));
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains("a win64 library"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two model files that name the same model would write one `.fmu` (or `.xml`) twice: refused,
/// naming both files, before anything is written.
#[test]
fn two_models_of_one_name_are_refused_before_anything_is_written() {
    let dir = tmp("names");
    let a = dir.join("a.toml");
    let b = dir.join("b.toml");
    let src = std::fs::read_to_string(workspace().join("models/two_tanks.toml")).unwrap();
    std::fs::write(&a, &src).unwrap();
    std::fs::write(&b, src.replace("Two tanks", "Other tanks")).unwrap();
    for extra in [&[][..], &["--description-only"][..]] {
        let o = run(fmu_build()
            .arg(&a)
            .arg(&b)
            .args(extra)
            .arg("-o")
            .arg(dir.join("out")));
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&a.display().to_string())
                && err.contains(&b.display().to_string())
                && err.contains("\"two_tanks\""),
            "{err}"
        );
        assert!(!dir.join("out").exists(), "nothing written");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
