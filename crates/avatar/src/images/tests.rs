use super::*;

#[test]
fn content_types() {
    assert_eq!(content_type("Renard-1.png"), "image/png");
    assert_eq!(content_type("a.JPG"), "image/jpeg");
    assert_eq!(content_type("a.svg"), "image/svg+xml; charset=utf-8");
    assert_eq!(content_type("README"), "application/octet-stream");
}

#[test]
fn safe_names() {
    assert!(is_safe_name("Renard-21.png"));
    for bad in ["", ".hidden", "a/b", "a%2fb", "a b", "é.png", ".."] {
        assert!(!is_safe_name(bad), "{bad}");
    }
}

#[test]
fn loads_only_safe_regular_files() {
    let dir = std::env::temp_dir().join(format!("avatar-images-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("Renard-1.png"), b"\x89PNG one").unwrap();
    std::fs::write(dir.join(".secret"), b"no").unwrap();
    std::fs::write(dir.join("sub").join("x.png"), b"no").unwrap();
    let images = ImageDir::load(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(images.len(), 1);
    let file = images.get(b"Renard-1.png").unwrap();
    assert_eq!(&*file.body, b"\x89PNG one");
    assert_eq!(file.content_type, "image/png");
    // The image head fields are built once here, not per request.
    let fields = String::from_utf8(file.fields.to_vec()).unwrap();
    assert!(
        fields.starts_with("Content-Type: image/png\r\nContent-Length: 8\r\nETag: \"")
            && fields.ends_with("\"\r\n"),
        "{fields:?}"
    );
    assert!(images.get(b".secret").is_none());
    assert!(images.get(b"sub").is_none());
}
