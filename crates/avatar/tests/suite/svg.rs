//! The SVG route: headers, ETag, XML validity, and what Chromium draws.

use std::process::{Command, Stdio};

use crate::common::{require_tool, roundtrip, Avatar, TempDir};

#[test]
fn svg_headers_and_etag_revalidation() {
    let server = Avatar::start(&[]);
    let mut s = server.connect();
    let resp = roundtrip(&mut s, b"GET /FF8800.svg HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.header("content-type"),
        Some("image/svg+xml; charset=utf-8")
    );
    assert_eq!(
        resp.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let etag = resp.header("etag").unwrap().to_owned();
    assert!(etag.starts_with("\"ff8800-"), "{etag}");
    assert!(String::from_utf8_lossy(&resp.body).contains("#ff8800"));
    let req = format!("GET /ff8800.svg HTTP/1.1\r\nHost: t\r\nIf-None-Match: {etag}\r\n\r\n");
    let resp = roundtrip(&mut s, req.as_bytes());
    assert_eq!(resp.status, 304);
    assert_eq!(resp.header("etag"), Some(etag.as_str()));
    let resp = roundtrip(
        &mut s,
        b"GET /ff8800.svg HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"other\"\r\n\r\n",
    );
    assert_eq!(resp.status, 200);
}

#[test]
fn custom_template_is_used() {
    let dir = TempDir::new("tpl");
    let path = dir.path().join("t.svg");
    std::fs::write(
        &path,
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect fill=\"{{color}}\"/></svg>",
    )
    .unwrap();
    let server = Avatar::start(&["--svg-template", path.to_str().unwrap()]);
    let resp = roundtrip(
        &mut server.connect(),
        b"GET /123abc.svg HTTP/1.1\r\nHost: t\r\n\r\n",
    );
    assert_eq!(
        resp.body,
        b"<svg xmlns=\"http://www.w3.org/2000/svg\"><rect fill=\"#123abc\"/></svg>"
    );
}

#[test]
fn svg_parses_as_xml() {
    require_tool("python3", "--version", "python3");
    let server = Avatar::start(&[]);
    let body = roundtrip(
        &mut server.connect(),
        b"GET /a8db7d.svg HTTP/1.1\r\nHost: t\r\n\r\n",
    )
    .body;
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as ET\n\
             root = ET.fromstring(sys.stdin.buffer.read())\n\
             assert root.tag == '{http://www.w3.org/2000/svg}svg', root.tag\n\
             fills = [e.get('fill') for e in root.iter()]\n\
             assert '#a8db7d' in fills, fills\n\
             print('xml ok')",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&body).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "xml.etree rejected the SVG: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn chromium_draws_the_fox_in_the_colour() {
    require_tool("chromium", "--version", "chromium");
    let server = Avatar::start(&[]);
    let dir = TempDir::new("chromium");
    let shot = dir.path().join("fox.png");
    let profile = dir.path().join("profile");
    let out = Command::new("timeout")
        .args([
            "120",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=400,400")
        .arg(server.url("/ff8800.svg"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        shot.exists(),
        "chromium made no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let near = buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| {
            let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).abs();
            d(p[0], 0xff) <= 12 && d(p[1], 0x88) <= 12 && d(p[2], 0x00) <= 12
        })
        .count();
    // The fox's head and ears cover about 20,000 of the 65,536 pixels of the 256x256 drawing.
    assert!(
        near > 8000,
        "only {near} pixels near #ff8800 in {}x{}",
        info.width,
        info.height
    );
}
