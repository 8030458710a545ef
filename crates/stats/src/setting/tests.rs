use super::*;

/// Which variant a setting is. A match without a wildcard: a new `Setting` does not
/// compile here until it is given a number, and [`Setting::ALL`] must then list it.
fn variant(s: Setting) -> usize {
    match s {
        Setting::Connections => 0,
        Setting::Threads => 1,
        Setting::Pipeline => 2,
        Setting::Streams => 3,
        Setting::Window => 4,
        Setting::ConnectionWindow => 5,
        Setting::Rate => 6,
        Setting::Requests => 7,
        Setting::Duration => 8,
        Setting::Timeout => 9,
        Setting::ConnectTimeout => 10,
        Setting::Interval => 11,
        Setting::Urls => 12,
        Setting::Http2 => 13,
        Setting::CaFile => 14,
        Setting::Insecure => 15,
        Setting::ClientCert => 16,
        Setting::Select => 17,
        Setting::Shard => 18,
        Setting::PartialOk => 19,
        Setting::ClosesPerS => 20,
        Setting::ServerThreads => 21,
        Setting::Alpha => 22,
        Setting::SameMachine => 23,
        Setting::Coalesce => 24,
        Setting::Idle => 25,
        Setting::Http3 => 26,
    }
}

#[test]
fn all_lists_every_setting_once_each_with_its_own_name() {
    let numbers: Vec<usize> = Setting::ALL.iter().map(|&s| variant(s)).collect();
    assert_eq!(numbers, (0..Setting::ALL.len()).collect::<Vec<_>>());
    let names: std::collections::BTreeSet<_> = Setting::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(names.len(), Setting::ALL.len(), "two settings share a name");
}

#[test]
fn plan_wording_names_settings_as_the_plan_does() {
    let t = Text::plain("pick: ")
        .give(&[Setting::CaFile, Setting::Insecure])
        .then(", or ")
        .drop(Setting::Http2)
        .then(" (")
        .name(Setting::Timeout)
        .then(")");
    assert_eq!(
            t.to_string(),
            "pick: set the CA file or the insecure setting, or unset the HTTP/2 setting (the timeout setting)"
        );
    assert_eq!(
        t.settings(),
        [
            Setting::CaFile,
            Setting::Insecure,
            Setting::Http2,
            Setting::Timeout
        ]
    );
}
