//! Suite parameters: a target's `params` matrix, its expansion into rows named
//! `name[key=value,...]`, and the `{param.KEY}` placeholders filled in each row's commands.
//!
//! One key gives one row per value (a list of variants); several keys give their cross
//! product, the first key varying slowest.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::raw::RawTarget;

/// What a parameter placeholder starts with: `{param.heap}`.
pub const PARAM_PREFIX: &str = "param.";

/// The most rows one target's `params` may expand into. Each row is a server built,
/// started, verified and measured on its own (about 7 s a level), so even this many is an
/// hour-long suite. A cross product of a few long lists passes it quickly: before this
/// limit, seven keys of ten values (10^7 rows) took 10 GB and over a minute to expand.
pub const MAX_ROWS: usize = 500;

/// A target's `params`, keys in the order written, each with its values as text.
#[derive(Debug, Clone, Default)]
pub(super) struct Params(pub(super) Vec<(String, Vec<String>)>);

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Params;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of value lists, e.g. { heap = [\"8m\", \"16m\"] }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let values = map.next_value::<Values>()?.0;
                    keys.push((key, values));
                }
                Ok(Params(keys))
            }
        }
        d.deserialize_map(V)
    }
}

/// One key's values: strings, numbers or booleans, kept as the text they stand for.
struct Values(Vec<String>);

impl<'de> Deserialize<'de> for Values {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Values;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of values, e.g. [\"8m\", \"16m\"] or [2, 150]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Values, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    out.push(v.0);
                }
                Ok(Values(out))
            }
        }
        d.deserialize_seq(V)
    }
}

/// One value as text.
struct Value(String);

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, a number or a boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
                Ok(Value(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
                Ok(Value(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
                Ok(Value(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
                Ok(Value(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
                Ok(Value(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl Params {
    /// The first mistake in the keys and values: (the key it is about, what is wrong).
    pub(super) fn check(&self) -> Result<(), (String, String)> {
        for (i, (key, values)) in self.0.iter().enumerate() {
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err((
                    key.clone(),
                    format!("{key:?} is not a parameter name: use letters, digits and '_'"),
                ));
            }
            if self.0[..i].iter().any(|(k, _)| k == key) {
                return Err((key.clone(), "declared twice".into()));
            }
            if values.is_empty() {
                return Err((
                    key.clone(),
                    format!("no values: give at least one, e.g. {key} = [\"a\", \"b\"]"),
                ));
            }
            if let Some(v) = values
                .iter()
                .find(|v| v.chars().any(|c| c.is_control() || "[],".contains(c)))
            {
                return Err((
                    key.clone(),
                    format!("{v:?}: a value may not hold '[', ']', ',' or control characters (they would blur the row's name)"),
                ));
            }
        }
        Ok(())
    }

    /// How many rows [`Params::rows`] gives; `None` beyond `usize`.
    pub(super) fn row_count(&self) -> Option<usize> {
        self.0
            .iter()
            .try_fold(1usize, |n, (_, values)| n.checked_mul(values.len()))
    }

    /// Every combination of values, the first key varying slowest; one empty row when
    /// there are no keys.
    pub(super) fn rows(&self) -> Vec<Vec<(String, String)>> {
        let mut rows: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for (key, values) in &self.0 {
            rows = rows
                .into_iter()
                .flat_map(|row| {
                    values.iter().map(move |v| {
                        let mut r = row.clone();
                        r.push((key.clone(), v.clone()));
                        r
                    })
                })
                .collect();
        }
        rows
    }

    /// The keys, for messages.
    pub(super) fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_str()).collect()
    }
}

/// A row's name: `base[key=value,key=value]`, or `base` for a row without parameters.
pub fn row_name(base: &str, row: &[(String, String)]) -> String {
    if row.is_empty() {
        return base.to_string();
    }
    let inner: Vec<String> = row.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{base}[{}]", inner.join(","))
}

/// The parameter names a command uses, as `{param.NAME}`, in order.
pub(super) fn used(cmd: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = cmd;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        let Some(j) = after.find('}') else { break };
        if let Some(name) = after[..j].strip_prefix(PARAM_PREFIX) {
            out.push(name);
        }
        rest = &after[j + 1..];
    }
    out
}

/// Fills a command's `{param.NAME}` placeholders from a row.
pub(super) fn fill(cmd: &str, row: &[(String, String)]) -> String {
    let mut out = cmd.to_string();
    for (k, v) in row {
        out = out.replace(&format!("{{{PARAM_PREFIX}{k}}}"), v);
    }
    out
}

/// Every `{param.NAME}` in the target's commands names one of its params, and every
/// param is used somewhere (else its rows would be the same server). A mistake is
/// (the key whose line it is on, the key's path in the target, what is wrong).
pub(super) fn check_param_use(
    t: &RawTarget,
    params: &Params,
) -> Result<(), (&'static str, String, String)> {
    let keys = params.keys();
    let mut commands: Vec<(&'static str, String, &str)> =
        vec![("start", "start".into(), t.start.0.as_str())];
    if let Some(b) = &t.build {
        commands.push(("build", "build".into(), &b.0));
    }
    if let Some(a) = &t.artifact {
        commands.push(("artifact", "artifact".into(), &a.0));
    }
    for (k, v) in &t.env {
        commands.push(("env", format!("env.{k}"), v));
    }
    for (line_key, key, cmd) in &commands {
        if let Some(unknown) = used(cmd).into_iter().find(|u| !keys.contains(u)) {
            let have = if keys.is_empty() {
                format!("this target has no params: declare them, e.g. params = {{ {unknown} = [\"a\", \"b\"] }}")
            } else {
                format!("this target's params are {}", keys.join(", "))
            };
            return Err((
                line_key,
                key.clone(),
                format!("unknown {{{PARAM_PREFIX}{unknown}}} in {cmd:?}: {have}"),
            ));
        }
    }
    if let Some(unused) = keys
        .iter()
        .find(|k| !commands.iter().any(|(_, _, c)| used(c).contains(k)))
    {
        return Err((
            "params",
            "params".into(),
            format!(
                "{unused} is never used: put {{{PARAM_PREFIX}{unused}}} in start, build or env"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
