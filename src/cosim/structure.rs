//! The model structure of a variable table (FMI's `ModelStructure`): the knowns (continuous
//! states and inputs) each output and each state derivative depends on directly, as value
//! references, from the network's structure alone: a derivative's states are its row of the
//! network's Jacobian pattern ([`crate::ode::OdeSystem::sparsity`], the pattern the BDF
//! factors), its inputs the parameters whose component's clique writes that row
//! ([`crate::network::parameter_rows`]); an output's states are those its formula reads
//! ([`crate::variables::output_state_dependencies`]), its inputs those a link's flow reads
//! ([`crate::variables::output_depends_on`]). Structural: a listed known may have a zero partial
//! derivative at some states (a closed one-way valve), an unlisted one never has another.

use super::{Causality, Description};
use crate::model::LoadedModel;
use crate::ode::OdeSystem;

/// The dependencies of every output and every state derivative, by value reference, each list
/// increasing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Structure {
    /// (output, knowns) for every output in variable order.
    pub outputs: Vec<(u32, Vec<u32>)>,
    /// (derivative, knowns) for every state derivative in the state vector's order (empty
    /// without Model Exchange).
    pub derivatives: Vec<(u32, Vec<u32>)>,
}

/// The model structure of `model`'s variable table `d` (see the module documentation).
pub fn structure(model: &LoadedModel, d: &Description) -> Result<Structure, String> {
    let sim = crate::model::build_simulation(&model.spec, None)
        .map_err(|e| format!("building the model for its structure: {e}"))?;
    let net = &sim.network;
    let inputs: Vec<(u32, &str, &str)> = d
        .variables
        .iter()
        .filter(|v| v.causality == Causality::Input)
        .filter_map(|v| {
            v.name
                .rsplit_once('.')
                .map(|(c, k)| (v.value_reference, c, k))
        })
        .collect();
    let state_vr = |i: usize| d.states[i];
    let mut s = Structure::default();
    for v in &d.variables {
        if v.causality != Causality::Output {
            continue;
        }
        let k = v.value_reference as usize;
        let mut known: Vec<u32> = inputs
            .iter()
            .filter(|(_, c, key)| crate::variables::output_depends_on(net, k, c, key))
            .map(|(vr, _, _)| *vr)
            .collect();
        if d.model_exchange && !crate::variables::is_sensitivity_output(net, k) {
            known.extend(
                crate::variables::output_state_dependencies(net, k)
                    .into_iter()
                    .map(state_vr),
            );
        }
        known.sort_unstable();
        known.dedup();
        s.outputs.push((v.value_reference, known));
    }
    if !d.model_exchange {
        return Ok(s);
    }
    let n = net.layout.n_states;
    // Row i's columns of the pattern ("f_i depends on y_j"); without a pattern, every state.
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); n];
    match net.sparsity() {
        Some(p) => {
            for j in 0..n {
                for &i in p.column(j) {
                    rows[i].push(j);
                }
            }
        }
        None => rows.iter_mut().for_each(|r| r.extend(0..n)),
    }
    let mut input_rows: Vec<(u32, Vec<usize>)> = Vec::new();
    for &(vr, c, key) in &inputs {
        let r = crate::network::parameter_rows(net, c, key).unwrap_or_else(|| (0..n).collect());
        input_rows.push((vr, r));
    }
    for (i, row) in rows.iter().enumerate() {
        let mut known: Vec<u32> = row.iter().map(|&j| state_vr(j)).collect();
        known.extend(
            input_rows
                .iter()
                .filter(|(_, r)| r.binary_search(&i).is_ok())
                .map(|(vr, _)| *vr),
        );
        known.sort_unstable();
        known.dedup();
        s.derivatives.push((d.derivatives[i], known));
    }
    Ok(s)
}
