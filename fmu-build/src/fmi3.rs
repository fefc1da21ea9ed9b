//! The FMI 3.0 `modelDescription.xml` of a model (`fmu-build --fmi-version 3`): the same
//! variable table, units, log categories, default experiment and dependencies as the FMI 2.0
//! one, in FMI 3.0's form: `Float64` variables referring to each other by value reference,
//! `instantiationToken`, `<ModelStructure>` with `<Output>`, `<ContinuousStateDerivative>`,
//! `<InitialUnknown>` and `<EventIndicator>`. Model Exchange's event indicators are variables
//! in FMI 3.0: they come after the table's variables ([`plenum::fmi3::event_indicators`]).

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, Event};

use super::{
    Error, GENERATION_TOOL, all_structured, build_err, causality_str, element, fmt_real,
    variability_str, write_units_categories_experiment, xml_err,
};
use plenum::cosim::{self, Causality, Description, Structure};
use plenum::model::LoadedModel;

/// The FMI 3.0 modelDescription.xml of a loaded model.
pub fn model_description(model: &LoadedModel) -> Result<String, Error> {
    let d = cosim::describe(model);
    let structure = cosim::structure(model, &d).map_err(build_err)?;
    description_xml(&d, &structure).map_err(|e| match e {
        Error::Model(mut errors) => {
            for err in &mut errors {
                if err.file.is_empty() {
                    err.file = model.file.clone();
                }
            }
            Error::Model(errors)
        }
        e => e,
    })
}

fn flag(b: bool) -> String {
    if b { "true" } else { "false" }.to_string()
}

/// The FMI 3.0 modelDescription.xml of a variable table and its dependencies.
pub fn description_xml(d: &Description, structure: &Structure) -> Result<String, Error> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .map_err(xml_err)?;
    let indicators = if d.model_exchange {
        plenum::fmi3::event_indicators(d)
    } else {
        Vec::new()
    };
    let names = d
        .variables
        .iter()
        .map(|v| v.name.as_str())
        .chain(indicators.iter().map(|(_, n)| n.as_str()));
    let naming = if all_structured(names) {
        "structured"
    } else {
        "flat"
    };
    for (_, n) in &indicators {
        if d.variables.iter().any(|v| &v.name == n) {
            return Err(build_err(format!(
                "the model has a variable named {n:?}, the name of an FMI 3.0 event indicator"
            )));
        }
    }
    w.write_event(Event::Start(element(
        "fmiModelDescription",
        &[
            ("fmiVersion", "3.0".into()),
            ("modelName", d.model_name.clone()),
            ("instantiationToken", d.guid.clone()),
            ("description", d.description.clone()),
            ("generationTool", GENERATION_TOOL.into()),
            ("variableNamingConvention", naming.into()),
        ],
    )?))
    .map_err(xml_err)?;

    // Capabilities: true only where the library provides them (docs/fmu.md, "FMI 3.0").
    let common = |extra: &[(&'static str, String)]| {
        let mut a = vec![
            ("modelIdentifier", d.model_name.clone()),
            ("needsExecutionTool", flag(false)),
            ("canBeInstantiatedOnlyOncePerProcess", flag(false)),
            ("canGetAndSetFMUState", flag(true)),
            ("canSerializeFMUState", flag(true)),
            ("providesDirectionalDerivatives", flag(true)),
            ("providesAdjointDerivatives", flag(false)),
            ("providesPerElementDependencies", flag(false)),
        ];
        a.extend_from_slice(extra);
        a
    };
    if d.model_exchange {
        w.write_event(Event::Empty(element(
            "ModelExchange",
            &common(&[
                ("needsCompletedIntegratorStep", flag(true)),
                ("providesEvaluateDiscreteStates", flag(false)),
            ]),
        )?))
        .map_err(xml_err)?;
    }
    w.write_event(Event::Empty(element(
        "CoSimulation",
        &common(&[
            ("canHandleVariableCommunicationStepSize", flag(true)),
            ("maxOutputDerivativeOrder", "0".into()),
            ("providesIntermediateUpdate", flag(false)),
            ("mightReturnEarlyFromDoStep", flag(false)),
            ("canReturnEarlyAfterIntermediateUpdate", flag(false)),
            ("hasEventMode", flag(false)),
            ("providesEvaluateDiscreteStates", flag(false)),
        ]),
    )?))
    .map_err(xml_err)?;

    write_units_categories_experiment(&mut w, d, &plenum::fmi3::LOG_CATEGORIES)?;

    // FMI 3.0 §2.4.7.4: parameters fixed + initial exact + start; inputs start; outputs and
    // locals no start (initial calculated); the independent variable neither.
    w.write_event(Event::Start(BytesStart::new("ModelVariables")))
        .map_err(xml_err)?;
    for v in &d.variables {
        let mut attrs = vec![
            ("name", v.name.clone()),
            ("valueReference", v.value_reference.to_string()),
        ];
        if !v.description.is_empty() {
            attrs.push(("description", v.description.clone()));
        }
        attrs.push(("causality", causality_str(v.causality).into()));
        attrs.push(("variability", variability_str(v.variability).into()));
        let start =
            match v.causality {
                Causality::Parameter => {
                    attrs.push(("initial", "exact".into()));
                    Some(v.start.ok_or_else(|| {
                        build_err(format!("parameter {} has no start value", v.name))
                    })?)
                }
                Causality::Input => Some(
                    v.start
                        .ok_or_else(|| build_err(format!("input {} has no start value", v.name)))?,
                ),
                Causality::Output | Causality::Independent | Causality::Local => None,
            };
        if let Some(s) = start {
            attrs.push(("start", fmt_real(s)));
        }
        attrs.push(("unit", v.unit.symbol.clone()));
        if let Some(du) = plenum::units::display_unit(&v.unit.symbol) {
            attrs.push(("displayUnit", du.name.to_string()));
        }
        if let Some(nominal) = v.nominal {
            attrs.push(("nominal", fmt_real(nominal)));
        }
        if let Some(state) = v.derivative_of {
            attrs.push(("derivative", state.to_string()));
        }
        w.write_event(Event::Empty(element("Float64", &attrs)?))
            .map_err(xml_err)?;
    }
    for (vr, name) in &indicators {
        w.write_event(Event::Empty(element(
            "Float64",
            &[
                ("name", name.clone()),
                ("valueReference", vr.to_string()),
                (
                    "description",
                    "Model Exchange event indicator: one of the network's event functions \
                     (an exit, an end stop, a flow reversal), +1 while it cannot fire"
                        .into(),
                ),
                ("causality", "local".into()),
                ("variability", "continuous".into()),
                ("unit", "1".into()),
            ],
        )?))
        .map_err(xml_err)?;
    }
    w.write_event(Event::End(BytesEnd::new("ModelVariables")))
        .map_err(xml_err)?;

    write_model_structure(&mut w, d, structure, &indicators)?;

    w.write_event(Event::End(BytesEnd::new("fmiModelDescription")))
        .map_err(xml_err)?;
    let mut bytes = w.into_inner();
    bytes.push(b'\n');
    String::from_utf8(bytes).map_err(|e| build_err(format!("XML is not UTF-8: {e}")))
}

/// `<ModelStructure>` (FMI 3.0 §2.4.8), references by value reference: every output and every
/// state derivative with its direct dependencies (as in FMI 2.0), the initial unknowns (the
/// outputs, and the states that are no output and the derivatives: every variable with
/// initial = calculated that the standard lists), and the event indicators.
fn write_model_structure(
    w: &mut Writer<Vec<u8>>,
    d: &Description,
    structure: &Structure,
    indicators: &[(u32, String)],
) -> Result<(), Error> {
    fn deps_of(list: &[(u32, Vec<u32>)], vr: u32) -> Option<&[u32]> {
        list.iter()
            .find(|(u, _)| *u == vr)
            .map(|(_, k)| k.as_slice())
    }
    let unknown = |w: &mut Writer<Vec<u8>>, tag: &str, vr: u32, deps: Option<&[u32]>| {
        let mut attrs = vec![("valueReference", vr.to_string())];
        if let Some(list) = deps {
            let join =
                |f: &dyn Fn(&u32) -> String| list.iter().map(f).collect::<Vec<_>>().join(" ");
            attrs.push(("dependencies", join(&|j| j.to_string())));
            if !list.is_empty() {
                attrs.push(("dependenciesKind", join(&|_| "dependent".to_string())));
            }
        }
        w.write_event(Event::Empty(element(tag, &attrs)?))
            .map_err(xml_err)
    };
    let outputs: Vec<u32> = d
        .variables
        .iter()
        .filter(|v| v.causality == Causality::Output)
        .map(|v| v.value_reference)
        .collect();
    let mut initial = outputs.clone();
    initial.extend(
        d.variables
            .iter()
            .filter(|v| v.causality == Causality::Local)
            .map(|v| v.value_reference),
    );
    initial.sort_unstable();
    w.write_event(Event::Start(BytesStart::new("ModelStructure")))
        .map_err(xml_err)?;
    for &vr in &outputs {
        unknown(w, "Output", vr, deps_of(&structure.outputs, vr))?;
    }
    for &vr in &d.derivatives {
        unknown(
            w,
            "ContinuousStateDerivative",
            vr,
            deps_of(&structure.derivatives, vr),
        )?;
    }
    for &vr in &initial {
        unknown(w, "InitialUnknown", vr, None)?;
    }
    for (vr, _) in indicators {
        unknown(w, "EventIndicator", *vr, None)?;
    }
    w.write_event(Event::End(BytesEnd::new("ModelStructure")))
        .map_err(xml_err)
}
