//! An `.fmu` opened the way a master opens it: unzipped into a temporary directory,
//! `modelDescription.xml` read (model identifier, GUID, capabilities, outputs, default
//! experiment), the shared library of this process's platform ([`PLATFORM`]:
//! `binaries/linux64/<modelIdentifier>.so`, `binaries/win64/<modelIdentifier>.dll`) loaded by
//! path.
//!
//! Method variants: the same FMU with `resources/model.toml`'s `method` changed, written to a
//! resources directory of its own, with the GUID the library expects for that text
//! ([`plenum::cosim::guid_of`]), as a user who edits the model file inside an FMU would do.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use quick_xml::events::Event;

/// The FMI 2.0 binaries folder and library extension of the platform this code runs on.
pub const PLATFORM: (&str, &str) = if cfg!(windows) {
    ("win64", "dll")
} else {
    ("linux64", "so")
};

/// What a master reads from modelDescription.xml.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelDescription {
    pub fmi_version: String,
    pub model_name: String,
    pub guid: String,
    /// `<CoSimulation modelIdentifier=...>`.
    pub model_identifier: String,
    pub can_get_and_set_fmu_state: bool,
    pub can_serialize_fmu_state: bool,
    /// Value references of the independent variable and the outputs, in document order.
    pub outputs: Vec<u32>,
    /// Their names (same order).
    pub output_names: Vec<String>,
    pub start_time: f64,
    pub stop_time: f64,
    pub step_size: f64,
}

fn attrs(e: &quick_xml::events::BytesStart) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|e| format!("modelDescription.xml: bad attribute: {e}"))?;
        let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        let value = a
            .unescape_value()
            .map_err(|e| format!("modelDescription.xml: bad attribute value: {e}"))?
            .into_owned();
        out.push((key, value));
    }
    Ok(out)
}

fn get<'a>(a: &'a [(String, String)], key: &str) -> Option<&'a str> {
    a.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn number(a: &[(String, String)], key: &str, what: &str) -> Result<Option<f64>, String> {
    get(a, key)
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .map_err(|e| format!("{what} {key}={v:?}: {e}"))
        })
        .transpose()
}

/// Parse the parts of modelDescription.xml a Co-Simulation master needs.
pub fn parse_model_description(xml: &str) -> Result<ModelDescription, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut md = ModelDescription {
        fmi_version: String::new(),
        model_name: String::new(),
        guid: String::new(),
        model_identifier: String::new(),
        can_get_and_set_fmu_state: false,
        can_serialize_fmu_state: false,
        outputs: Vec::new(),
        output_names: Vec::new(),
        start_time: 0.0,
        stop_time: f64::NAN,
        step_size: f64::NAN,
    };
    let mut saw_root = false;
    let mut saw_cs = false;
    loop {
        let ev = reader
            .read_event()
            .map_err(|e| format!("modelDescription.xml: {e}"))?;
        let (Event::Start(e) | Event::Empty(e)) = &ev else {
            if matches!(ev, Event::Eof) {
                break;
            }
            continue;
        };
        let a = attrs(e)?;
        match e.name().as_ref() {
            b"fmiModelDescription" => {
                saw_root = true;
                md.fmi_version = get(&a, "fmiVersion").unwrap_or_default().into();
                md.model_name = get(&a, "modelName").unwrap_or_default().into();
                md.guid = get(&a, "guid")
                    .ok_or("fmiModelDescription has no guid")?
                    .into();
            }
            b"CoSimulation" => {
                saw_cs = true;
                md.model_identifier = get(&a, "modelIdentifier")
                    .ok_or("CoSimulation has no modelIdentifier")?
                    .into();
                md.can_get_and_set_fmu_state = get(&a, "canGetAndSetFMUstate") == Some("true");
                md.can_serialize_fmu_state = get(&a, "canSerializeFMUstate") == Some("true");
            }
            b"DefaultExperiment" => {
                let w = "DefaultExperiment";
                md.start_time = number(&a, "startTime", w)?.unwrap_or(0.0);
                md.stop_time = number(&a, "stopTime", w)?.unwrap_or(f64::NAN);
                md.step_size = number(&a, "stepSize", w)?.unwrap_or(f64::NAN);
            }
            b"ScalarVariable" => {
                let causality = get(&a, "causality").unwrap_or("local");
                if causality == "output" || causality == "independent" {
                    let vr =
                        get(&a, "valueReference").ok_or("ScalarVariable without valueReference")?;
                    md.outputs.push(
                        vr.parse()
                            .map_err(|e| format!("valueReference {vr:?}: {e}"))?,
                    );
                    md.output_names
                        .push(get(&a, "name").unwrap_or_default().into());
                }
            }
            _ => {}
        }
    }
    if !saw_root {
        return Err("modelDescription.xml has no fmiModelDescription element".into());
    }
    if !saw_cs {
        return Err("modelDescription.xml has no CoSimulation element".into());
    }
    if md.fmi_version != "2.0" {
        return Err(format!("fmiVersion {:?}, expected \"2.0\"", md.fmi_version));
    }
    Ok(md)
}

/// An unzipped FMU (the directory is removed on drop).
pub struct Unpacked {
    pub fmu: PathBuf,
    pub dir: PathBuf,
    pub md: ModelDescription,
    /// `binaries/<platform>/<modelIdentifier>.<extension>` ([`PLATFORM`]).
    pub library: PathBuf,
    /// `resources/model.toml` as shipped.
    pub model_text: String,
}

/// A temporary directory of this process.
pub fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "plenum-fmu-compliance-{}-{n}-{tag}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Unzip `fmu` into a fresh temporary directory and read its model description.
pub fn unpack(fmu: &Path) -> Result<Unpacked, String> {
    let file =
        std::fs::File::open(fmu).map_err(|e| format!("cannot open {}: {e}", fmu.display()))?;
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| format!("{} is not a zip: {e}", fmu.display()))?;
    let stem = fmu
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fmu".into());
    let dir = temp_dir(&stem);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| format!("{}: entry {i}: {e}", fmu.display()))?;
        let Some(rel) = entry.enclosed_name() else {
            return Err(format!(
                "{}: entry {:?} escapes the directory",
                fmu.display(),
                entry.name()
            ));
        };
        let path = dir.join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{}: {}: {e}", fmu.display(), entry.name()))?;
        std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let xml = std::fs::read_to_string(dir.join("modelDescription.xml"))
        .map_err(|e| format!("{}: modelDescription.xml: {e}", fmu.display()))?;
    let md = parse_model_description(&xml).map_err(|e| format!("{}: {e}", fmu.display()))?;
    let (folder, extension) = PLATFORM;
    let library = dir
        .join("binaries")
        .join(folder)
        .join(format!("{}.{extension}", md.model_identifier));
    if !library.is_file() {
        return Err(format!(
            "{}: no binaries/{folder}/{}.{extension}",
            fmu.display(),
            md.model_identifier
        ));
    }
    let model_text = std::fs::read_to_string(dir.join("resources/model.toml"))
        .map_err(|e| format!("{}: resources/model.toml: {e}", fmu.display()))?;
    Ok(Unpacked {
        fmu: fmu.to_path_buf(),
        dir,
        md,
        library,
        model_text,
    })
}

/// The model's `method` (the `[solver]` table's), or `auto` when it names none.
pub fn method_of(text: &str) -> String {
    text.lines()
        .find_map(|l| {
            let l = l.split('#').next().unwrap_or("").trim();
            let rest = l.strip_prefix("method")?.trim_start().strip_prefix('=')?;
            Some(rest.trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "auto".into())
}

/// The model text with `method = "<method>"`; for methods without a fixed step the `step` line
/// is dropped (adaptive methods take rtol/atol and their defaults).
pub fn with_method(text: &str, method: &str) -> String {
    let fixed = plenum::integrators::Method::needs_step(method);
    let mut out = String::new();
    let mut replaced = false;
    for line in text.lines() {
        let key = line.trim_start();
        if key.starts_with("method") && key[6..].trim_start().starts_with('=') {
            out.push_str(&format!("method = \"{method}\""));
            replaced = true;
        } else if !fixed && key.starts_with("step") && key[4..].trim_start().starts_with('=') {
            continue;
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !replaced {
        out = out.replacen(
            "[solver]\n",
            &format!("[solver]\nmethod = \"{method}\"\n"),
            1,
        );
    }
    out
}

/// One FMU with one model text: the resources directory and the GUID that goes with it.
pub struct Variant {
    /// `<model>/<method>`.
    pub label: String,
    pub method: String,
    pub resources: PathBuf,
    pub guid: String,
}

impl Unpacked {
    /// The FMU as shipped (`None`), or with `method` (a copy of resources/ in the unpacked
    /// directory, the GUID recomputed).
    pub fn variant(&self, method: Option<&str>) -> Result<Variant, String> {
        let shipped = method_of(&self.model_text);
        let Some(method) = method.filter(|m| *m != shipped) else {
            let guid = plenum::cosim::guid_of(self.model_text.as_bytes());
            if guid != self.md.guid {
                return Err(format!(
                    "{}: modelDescription.xml's GUID {} is not the hash of resources/model.toml \
                     ({guid})",
                    self.fmu.display(),
                    self.md.guid
                ));
            }
            return Ok(Variant {
                label: format!("{}/{shipped}", self.md.model_name),
                method: shipped,
                resources: self.dir.join("resources"),
                guid,
            });
        };
        let text = with_method(&self.model_text, method);
        let resources = self.dir.join("variants").join(method).join("resources");
        std::fs::create_dir_all(&resources).map_err(|e| format!("{}: {e}", resources.display()))?;
        std::fs::write(resources.join("model.toml"), &text)
            .map_err(|e| format!("{}: {e}", resources.display()))?;
        Ok(Variant {
            label: format!("{}/{method}", self.md.model_name),
            method: method.into(),
            resources,
            guid: plenum::cosim::guid_of(text.as_bytes()),
        })
    }
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_lines() {
        let t = "[solver]\nmethod = \"rk4\"   # x\nstep = 1e-6\n";
        assert_eq!(method_of(t), "rk4");
        assert_eq!(
            with_method(t, "ab3"),
            "[solver]\nmethod = \"ab3\"\nstep = 1e-6\n"
        );
        assert_eq!(method_of("[solver]\nstep = 1\n"), "auto");
    }
}
