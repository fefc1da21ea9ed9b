//! The README's tutorial ("Your first model in ten minutes") run as written. Its model file,
//! its shell commands and the figures it quotes are read from README.md itself, so the section
//! cannot drift from what the tools do:
//!
//! - the model is written where the section says, in a scratch directory that stands for the
//!   repository root;
//! - every shell command is run: `target/release/<tool>` is this workspace's build of the tool
//!   (`plenum`, `fmu-build`, `libplenum.so`, built by the nested Cargo of
//!   [`compliance_tests::library_path`] in the tests' profile), `mkdir -p` makes the directory;
//!   `cargo build` is what the harness has just done; the two Python lines must run the script
//!   the section defines, which `compliance-tests/python/test_readme_tutorial.py` runs in FMPy;
//! - the FMU the section builds is loaded here the way a master loads it and stepped over the
//!   default experiment, as FMPy's `simulate_fmu` does;
//! - every figure the section quotes must be what `plenum run` prints (or, for the FMPy line, the
//!   FMU's final state rounded as the script prints it), and must equal the closed form of two
//!   isothermal tanks joined by a linear valve, computed here from the model file's numbers:
//!   Δp(t) = Δp₀·e^(−t/τ), τ = 1/(K·R·T·(1/V_a + 1/V_b)), around the volume-weighted mean
//!   pressure, with air's R = 287.05 J/(kg·K).
//!
//! Linux only: the section's commands are a Linux shell's and its tools the Linux builds; the
//! win64 library is tested under Wine by the other suites of this crate.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;

mod doc_support;
use doc_support::{Block, blocks, readme, tools};

use compliance_tests::fmu::{temp_dir, unpack};
use compliance_tests::{Fmu, OK, library_path, load_library};

const SECTION: &str = "## Your first model in ten minutes";
/// Air's specific gas constant, J/(kg·K) (the `air` species of `src/gas.rs`).
const R_AIR: f64 = 287.05;

/// The tutorial section: from its heading to the next `## ` heading.
fn section(text: &str) -> String {
    let start = text
        .find(SECTION)
        .unwrap_or_else(|| panic!("README.md has no section {SECTION:?}"));
    let body = &text[start + SECTION.len()..];
    let end = body.find("\n## ").unwrap_or(body.len());
    body[..end].to_string()
}

/// The last backticked path in `prose` that ends with `ext` (where the section says to save a
/// block).
fn named_path(prose: &str, ext: &str) -> String {
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.ends_with(ext))
        .last()
        .unwrap_or_else(|| panic!("no `…{ext}` path before the block in:\n{prose}"))
        .to_string()
}

/// A README word as this harness runs it: `target/release/<tool>` → the tests' build of it.
fn map_word(word: &str) -> String {
    let word = word.trim_matches('"');
    match word.strip_prefix("target/release/") {
        Some("plenum") => tools().0.display().to_string(),
        Some("fmu-build") => tools().1.display().to_string(),
        Some("libplenum.so") => library_path().display().to_string(),
        _ => word.to_string(),
    }
}

/// Run one README command line in `root`; the `plenum run` outputs are returned.
fn run_line(line: &str, root: &Path, python_script: &str) -> Option<String> {
    let line = line.split(" #").next().unwrap_or("").trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    match words[0] {
        "cargo" => {
            assert_eq!(
                words,
                ["cargo", "build", "--release", "--workspace"],
                "{line}"
            );
            println!("$ {line}   (the harness's own build)");
            None
        }
        "mkdir" => {
            assert_eq!(words[1], "-p", "{line}");
            for dir in &words[2..] {
                std::fs::create_dir_all(root.join(dir)).unwrap();
            }
            println!("$ {line}");
            None
        }
        w if w.starts_with("PY=") => {
            assert_eq!(line, "PY=$(bash scripts/python-env.sh)", "{line}");
            println!("$ {line}   (compliance-tests/python/test_readme_tutorial.py)");
            None
        }
        "\"$PY\"" => {
            assert_eq!(words[1..], [python_script], "{line}");
            println!("$ {line}   (compliance-tests/python/test_readme_tutorial.py)");
            None
        }
        w if w.starts_with("target/release/") => {
            let program = map_word(w);
            let args: Vec<String> = words[1..].iter().map(|w| map_word(w)).collect();
            let out = Command::new(&program)
                .args(&args)
                .current_dir(root)
                .output()
                .unwrap_or_else(|e| panic!("{program}: {e}"));
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            println!("$ {line}\n{stdout}{}", String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "`{line}` failed: {}", out.status);
            Some(stdout)
        }
        _ => panic!("the tutorial has a command this test does not know how to run: {line}"),
    }
}

/// The closed form at `t` from the model file: (p_a, p_b, valve mass flow a → b).
fn closed_form(model: &toml::Table, t: f64) -> (f64, f64, f64) {
    let chambers = model["chamber"].as_array().expect("[[chamber]]");
    assert_eq!(
        chambers.len(),
        2,
        "the tutorial's closed form is for two tanks"
    );
    let num = |v: &toml::Value, key: &str| -> f64 {
        let x = &v[key];
        x.as_float()
            .or_else(|| x.as_integer().map(|i| i as f64))
            .unwrap_or_else(|| panic!("{key} = {x}"))
    };
    let (va, pa, ta) = (
        num(&chambers[0], "volume"),
        num(&chambers[0], "pressure"),
        num(&chambers[0], "temperature"),
    );
    let (vb, pb, tb) = (
        num(&chambers[1], "volume"),
        num(&chambers[1], "pressure"),
        num(&chambers[1], "temperature"),
    );
    assert_eq!(ta, tb, "one temperature for both tanks");
    let gas = model["gas"].as_table().unwrap();
    assert_eq!(gas["species"].as_str(), Some("air"));
    assert_eq!(gas["isothermal"].as_bool(), Some(true));
    let valve = &model["valve"].as_array().expect("[[valve]]")[0];
    let k = num(valve, "coefficient");
    let rate = k * R_AIR * ta * (1.0 / va + 1.0 / vb);
    let mean = (pa * va + pb * vb) / (va + vb);
    let dp = (pa - pb) * (-rate * t).exp();
    (
        mean + dp * vb / (va + vb),
        mean - dp * va / (va + vb),
        k * dp,
    )
}

/// `x` with `decimals` decimals and a comma every three digits (376,735.07).
fn thousands(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(frac) = frac {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// The prose between the quoted `run` figures and the next block, unwrapped to one line.
fn quoted_run_prose(blocks: &[Block]) -> String {
    let after = blocks
        .iter()
        .position(|b| b.lang == "text")
        .and_then(|i| blocks.get(i + 1))
        .expect("a block after the quoted run");
    after
        .before
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The numbers of a quoted line, in order.
fn numbers(line: &str) -> Vec<f64> {
    line.split(|c: char| !(c.is_ascii_digit() || "+-.e".contains(c)))
        .filter_map(|w| w.trim_end_matches('.').parse::<f64>().ok())
        .collect()
}

#[test]
fn the_readme_tutorial_runs_as_written_and_its_figures_are_the_closed_form() {
    let text = readme();
    let section = section(&text);
    let blocks = blocks(&section);
    let model_block = blocks
        .iter()
        .find(|b| b.lang == "toml")
        .expect("a toml block");
    let python_block = blocks
        .iter()
        .find(|b| b.lang == "python")
        .expect("a python block");
    let model_path = named_path(&model_block.before, ".toml");
    let python_path = named_path(&python_block.before, ".py");
    let model: toml::Table = toml::from_str(&model_block.text).expect("the model is TOML");
    let t_end = model["solver"]["t_end"].as_float().expect("t_end");

    let root = temp_dir("readme-tutorial");
    std::fs::create_dir_all(&root).unwrap();
    let mut runs = Vec::new();
    let mut wrote_model = false;
    for block in &blocks {
        if block.lang == "toml" {
            // Saved before the commands that follow it (the section writes it after `mkdir`).
            std::fs::write(root.join(&model_path), &block.text).unwrap();
            wrote_model = true;
            println!("wrote {model_path}");
        }
        if block.lang != "sh" {
            continue;
        }
        for line in block.text.lines() {
            if let Some(out) = run_line(line, &root, &python_path) {
                assert!(wrote_model || !line.contains(&model_path));
                runs.push((line.to_string(), out));
            }
        }
    }
    assert!(wrote_model);

    // `check` accepts it, `--plot` drew a picture.
    assert!(runs.iter().any(|(l, _)| l.contains(" check ")));
    let svg = runs
        .iter()
        .find_map(|(l, _)| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.iter()
                .position(|x| *x == "--plot")
                .map(|i| root.join(w[i + 1]))
        })
        .expect("a --plot command");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains("<svg") && picture.len() > 1000,
        "{}",
        svg.display()
    );
    println!("{} has {} bytes", svg.display(), picture.len());

    // The figures quoted after `run`: printed by it, and the closed form.
    let run_out = &runs
        .iter()
        .find(|(l, _)| l.contains(" run ") && !l.contains("--plot"))
        .expect("a plain run")
        .1;
    let (pa, pb, mdot) = closed_form(&model, t_end);
    let exact = |name: &str| match name {
        "a.p" => pa,
        "b.p" => pb,
        "v.mdot" => mdot,
        _ => panic!("the tutorial quotes {name}, which the closed form does not give"),
    };
    let quoted_run = blocks
        .iter()
        .find(|b| b.lang == "text")
        .expect("a text block after run");
    let mut compared = 0;
    for line in quoted_run.text.lines().filter(|l| !l.trim().is_empty()) {
        let quoted_words: Vec<&str> = line.split_whitespace().collect();
        let [name, value, unit] = quoted_words[..] else {
            panic!("`name value unit` expected, the README has {line:?}");
        };
        let printed = run_out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("`plenum run` printed no {name}:\n{run_out}"));
        let printed_words: Vec<&str> = printed.split_whitespace().collect();
        assert_eq!(
            printed_words.get(2),
            Some(&unit),
            "{name}'s unit: {printed}"
        );
        let printed_value: f64 = printed_words[1].parse().unwrap();
        let quoted: f64 = value.parse().unwrap();
        let digits = value.trim_start_matches('-');
        // The quoted figure is the printed one, to the digits quoted.
        let decimals = digits
            .split('e')
            .next()
            .and_then(|m| m.split('.').nth(1))
            .map_or(0, str::len);
        let scale = if digits.contains('e') {
            10f64.powi(numbers(digits.split('e').nth(1).unwrap())[0] as i32)
        } else {
            1.0
        };
        let ulp_quoted = 0.5 * 10f64.powi(-(decimals as i32)) * scale;
        let rel = ((quoted - exact(name)) / exact(name)).abs();
        println!(
            "{name}: quoted {value}, printed {printed_value:e}, closed form {:e} (quoted − \
             closed form: {rel:.1e} relative)",
            exact(name)
        );
        assert!(
            (printed_value - quoted).abs() <= ulp_quoted * (1.0 + 1e-12),
            "{name}: README quotes {value}, `plenum run` prints {printed_value}"
        );
        assert!(
            rel < 1e-5,
            "{name}: {quoted} is not the closed form {}",
            exact(name)
        );
        // The section says the run's pressures are within 1e-7 of the closed form (the flow,
        // proportional to their difference, carries a larger relative error).
        let run_rel = ((printed_value - exact(name)) / exact(name)).abs();
        let limit = if name.ends_with(".p") { 1e-7 } else { 1e-5 };
        assert!(run_rel < limit, "{name}: the run is {run_rel:.1e} off");
        compared += 1;
    }
    assert!(compared >= 2);

    // The closed-form figures the prose states are the closed form's.
    let (chambers, k) = (model["chamber"].as_array().unwrap(), &model["valve"][0]);
    let f = |v: &toml::Value| v.as_float().unwrap();
    let (va, vb) = (f(&chambers[0]["volume"]), f(&chambers[1]["volume"]));
    let tau = 1.0
        / (f(&k["coefficient"]) * R_AIR * f(&chambers[0]["temperature"]) * (1.0 / va + 1.0 / vb));
    let mean = (f(&chambers[0]["pressure"]) * va + f(&chambers[1]["pressure"]) * vb) / (va + vb);
    let prose = quoted_run_prose(&blocks);
    for stated in [
        format!("{tau:.3} s"),
        format!("{} Pa", thousands(mean, 0)),
        format!("p_a = {} Pa", thousands(pa, 2)),
        format!("p_b = {} Pa", thousands(pb, 2)),
    ] {
        println!("closed form: {stated}");
        assert!(
            prose.contains(&stated),
            "the section should state {stated:?}:\n{prose}"
        );
    }

    // The FMU the section built, loaded and stepped as FMPy's simulate_fmu steps it.
    let fmu_path = runs
        .iter()
        .find_map(|(l, _)| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].ends_with("fmu-build")).then(|| {
                let out = w[w.iter().position(|x| *x == "-o").unwrap() + 1];
                let name = model["model"]["name"].as_str().unwrap();
                root.join(out).join(format!("{name}.fmu"))
            })
        })
        .expect("an fmu-build command");
    let unpacked = unpack(&fmu_path).unwrap();
    let md = &unpacked.md;
    assert_eq!(md.stop_time, t_end);
    let lib = load_library(&unpacked.library).unwrap();
    let fmu = Fmu::from_description(
        lib,
        "tutorial",
        &md.guid,
        &unpacked.dir.join("resources"),
        &md.outputs,
    )
    .unwrap();
    fmu.initialize(md.start_time);
    let n = ((md.stop_time - md.start_time) / md.step_size).round() as usize;
    for i in 0..n {
        let t = md.start_time + i as f64 * md.step_size;
        assert_eq!(fmu.do_step(t, md.step_size), OK, "fmi2DoStep at {t}");
    }
    let vr = |name: &str| {
        md.outputs[md
            .output_names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("no output {name}"))]
    };
    let (s, v) = fmu.get_real(&[vr("time"), vr("a.p"), vr("b.p")]);
    assert_eq!(s, OK);
    println!(
        "FMU after {n} steps: t = {} s, a.p = {} Pa, b.p = {} Pa",
        v[0], v[1], v[2]
    );
    let quoted_fmpy = blocks
        .iter()
        .filter(|b| b.lang == "text")
        .nth(1)
        .expect("a text block with the FMPy line");
    let q = numbers(quoted_fmpy.text.trim());
    assert_eq!(q.len(), 3, "t, a.p, b.p in {:?}", quoted_fmpy.text);
    for ((quoted, got), exact) in q.iter().zip(&v).zip([t_end, pa, pb]) {
        // The script prints two decimals.
        assert!(
            (quoted - got).abs() <= 0.005 * (1.0 + 1e-9),
            "{quoted} against the FMU's {got}"
        );
        assert!(
            ((quoted - exact) / exact).abs() < 1e-5,
            "{quoted} against {exact}"
        );
    }
    println!("FMPy line quoted: {}", quoted_fmpy.text.trim());
    let _ = std::fs::remove_dir_all(&root);
}
