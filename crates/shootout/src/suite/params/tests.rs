use super::*;

fn params(text: &str) -> Params {
    #[derive(Deserialize)]
    struct T {
        params: Params,
    }
    toml::from_str::<T>(text).unwrap().params
}

#[test]
fn one_key_is_a_list_of_rows_and_several_a_cross_product() {
    let p = params(r#"params = { jvm = ["-Xmx8m", "-Xmx16m -XX:+UseZGC"] }"#);
    let names: Vec<String> = p.rows().iter().map(|r| row_name("j", r)).collect();
    assert_eq!(names, ["j[jvm=-Xmx8m]", "j[jvm=-Xmx16m -XX:+UseZGC]"]);
    // Written order, not alphabetical: heap varies slowest.
    let p = params(r#"params = { heap = ["8m", "16m"], gc = ["G1", "Z"] }"#);
    let names: Vec<String> = p.rows().iter().map(|r| row_name("j", r)).collect();
    assert_eq!(
        names,
        [
            "j[heap=8m,gc=G1]",
            "j[heap=8m,gc=Z]",
            "j[heap=16m,gc=G1]",
            "j[heap=16m,gc=Z]"
        ]
    );
    let p = params("params = { threads = [10, 200], fast = [true] }");
    let names: Vec<String> = p.rows().iter().map(|r| row_name("j", r)).collect();
    assert_eq!(
        names,
        ["j[threads=10,fast=true]", "j[threads=200,fast=true]"]
    );
    assert_eq!(Params::default().rows(), vec![Vec::new()]);
    assert_eq!(row_name("j", &[]), "j");
}

#[test]
fn placeholders_are_found_and_filled() {
    let cmd = "java {param.jvm} -Xss{param.stack} -cp {out} A {port}";
    assert_eq!(used(cmd), ["jvm", "stack"]);
    let row = vec![
        ("jvm".to_string(), "-Xmx8m".to_string()),
        ("stack".to_string(), "256k".to_string()),
    ];
    assert_eq!(fill(cmd, &row), "java -Xmx8m -Xss256k -cp {out} A {port}");
}

#[test]
fn bad_keys_and_values_are_named() {
    let cases = [
        (r#"params = { jvm = [] }"#, "jvm", "no values"),
        (
            r#"params = { "a b" = ["x"] }"#,
            "a b",
            "not a parameter name",
        ),
        (r#"params = { jvm = ["a,b"] }"#, "jvm", "may not hold"),
    ];
    for (text, key, want) in cases {
        let (k, e) = params(text).check().unwrap_err();
        assert_eq!(k, key, "{text}");
        assert!(e.contains(want), "{text}: {e}");
    }
    assert!(params(r#"params = { jvm = ["-Xmx8m"] }"#).check().is_ok());
}

#[test]
fn row_count_is_the_product_without_expanding() {
    let p = params(r#"params = { heap = ["8m", "16m"], gc = ["G1", "Z", "S"] }"#);
    assert_eq!(p.row_count(), Some(6));
    assert_eq!(p.row_count(), Some(p.rows().len()));
    assert_eq!(Params::default().row_count(), Some(1));
    // 20 keys of 10 values: 10^20 rows, more than usize holds.
    let keys: Vec<String> = (0..20)
        .map(|k| format!("k{k} = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"))
        .collect();
    let p = params(&format!("params = {{ {} }}", keys.join(", ")));
    assert_eq!(p.row_count(), None);
}
