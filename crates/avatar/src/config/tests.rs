use super::*;

#[test]
fn defaults_are_valid() {
    Config::default().validate().unwrap();
    assert_eq!(
        Config::default().location_for(3),
        "https://avatar.example/Renard-3.png"
    );
}

#[test]
fn bad_values_have_flag_messages() {
    let c = Config {
        images: 0,
        ..Config::default()
    };
    assert_eq!(
        c.validate().unwrap_err().to_string(),
        "--images must be between 1 and 65535 (got 0)"
    );
    let c = Config {
        location: Some("https://x/y.png".into()),
        ..Config::default()
    };
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("--location must contain {n}"));
    let c = Config {
        location: Some("https://x/{n}\r\nSet-Cookie: a".into()),
        ..Config::default()
    };
    assert!(matches!(c.validate(), Err(ConfigError::LocationInvalid(_))));
}

#[test]
fn images_dir_changes_default_location() {
    let c = Config {
        images_dir: Some("/srv".into()),
        ..Config::default()
    };
    assert_eq!(c.location_for(21), "/images/Renard-21.png");
}
