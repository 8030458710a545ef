//! The shootout's wording of the engine's settings: each as the suite-file key that sets
//! it ([`suite_key`]), so that an engine error about a target reads in the suite's terms.
//! This is the one mapping; no message is rewritten after it is made.

use load::{PlanWording, Setting, Wording};

/// Where a setting lives in a suite file, and the keys that set it (with a value to show).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteKey {
    /// The table: `scenario`, `level` or `plan`.
    pub table: &'static str,
    /// The keys, each with the value a fix sets it to.
    pub keys: &'static [(&'static str, &'static str)],
}

/// The suite key that sets `setting`; `None` for the engine's settings a suite leaves at
/// their defaults (threads, windows, the request table) or that are no run's (a merge's,
/// a limit check's).
pub fn suite_key(setting: Setting) -> Option<SuiteKey> {
    let key = |table, keys| Some(SuiteKey { table, keys });
    match setting {
        Setting::Connections => key("level", &[("connections", "N")]),
        Setting::Requests => key("level", &[("requests", "N")]),
        Setting::Rate => key("level", &[("rate", "N")]),
        Setting::Streams => key("level", &[("streams", "N")]),
        Setting::Pipeline => key("scenario", &[("pipeline", "N")]),
        Setting::Duration => key("plan", &[("duration", "\"10s\"")]),
        // The shootout's connect timeout is its response timeout.
        Setting::Timeout | Setting::ConnectTimeout => key("plan", &[("timeout", "\"10s\"")]),
        Setting::Http2 => key("scenario", &[("http2", "true")]),
        Setting::Http3 => key("scenario", &[("http3", "true")]),
        Setting::Coalesce => key("scenario", &[("coalesce", "\"auto\"")]),
        Setting::Idle => key("scenario", &[("idle", "\"auto\"")]),
        Setting::CaFile => key("scenario", &[("cacert", "\"FILE\"")]),
        Setting::Insecure => key("scenario", &[("insecure", "true")]),
        Setting::ClientCert => key("scenario", &[("cert", "\"FILE\""), ("key", "\"FILE\"")]),
        Setting::Threads
        | Setting::Window
        | Setting::ConnectionWindow
        | Setting::Interval
        | Setting::Urls
        | Setting::Select
        | Setting::Shard
        | Setting::PartialOk
        | Setting::ClosesPerS
        | Setting::ServerThreads
        | Setting::Alpha
        | Setting::SameMachine => None,
    }
}

/// How to drop a setting a suite asks for in more than one place, where its key alone
/// would not do: HTTP/3 comes from a scenario's `http3 = true` or a level of its `levels`.
fn drop_words(setting: Setting) -> Option<&'static str> {
    match setting {
        Setting::Http3 => Some("drop http3 = true, or the HTTP/3 level from levels"),
        _ => None,
    }
}

/// Settings worded as suite keys: `the scenario's cacert`, `set the scenario's cacert =
/// "FILE" or insecure = true in the suite`.
#[derive(Debug, Clone, Copy)]
pub struct SuiteKeys;

impl Wording for SuiteKeys {
    fn name(&self, setting: Setting) -> String {
        match suite_key(setting) {
            Some(k) => {
                let keys: Vec<_> = k.keys.iter().map(|(key, _)| *key).collect();
                format!("the {}'s {}", k.table, keys.join(" and "))
            }
            None => PlanWording.name(setting),
        }
    }

    fn give(&self, settings: &[Setting]) -> String {
        let mut table = None;
        let mut alternatives = Vec::new();
        for &s in settings {
            let Some(k) = suite_key(s) else {
                alternatives.push(PlanWording.name(s));
                continue;
            };
            let pairs: Vec<_> = k
                .keys
                .iter()
                .map(|(key, v)| format!("{key} = {v}"))
                .collect();
            let pairs = pairs.join(" and ");
            if table == Some(k.table) {
                alternatives.push(pairs);
            } else {
                alternatives.push(format!("the {}'s {pairs}", k.table));
            }
            table = Some(k.table);
        }
        format!("set {} in the suite", alternatives.join(" or "))
    }

    fn drop(&self, setting: Setting) -> String {
        if let Some(words) = drop_words(setting) {
            return words.into();
        }
        match suite_key(setting) {
            Some(k) => {
                let pairs: Vec<_> = k
                    .keys
                    .iter()
                    .map(|(key, v)| format!("{key} = {v}"))
                    .collect();
                format!(
                    "drop the {}'s {} from the suite",
                    k.table,
                    pairs.join(" and ")
                )
            }
            None => PlanWording.drop(setting),
        }
    }
}

#[cfg(test)]
mod tests;
