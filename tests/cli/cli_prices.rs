//! `tracecost prices update`: LiteLLM's price file fetched (from a server
//! on loopback: no test reaches the network) and written as a pricing file
//! that `--pricing` reads.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use crate::util::{fixture, outcome, tracecost};

/// Serves one GET with `status` and `body` on a loopback port; returns
/// the address of `/model_prices_and_context_window.json` on it and the
/// thread, which ends with the request line it read.
fn serve_once(status: &str, body: Vec<u8>) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let status = status.to_owned();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request = String::new();
        reader.read_line(&mut request).unwrap();
        // The headers, up to the blank line.
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap() > 2 {
            line.clear();
        }
        let mut out = stream;
        write!(
            out,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        out.write_all(&body).unwrap();
        out.flush().unwrap();
        request
    });
    (
        format!("http://127.0.0.1:{port}/model_prices_and_context_window.json"),
        server,
    )
}

/// `tracecost prices update --url URL --out OUT`, with no proxy in the
/// way of loopback.
fn update(url: &str, out: &Path) -> (i32, String, String) {
    let mut cmd = tracecost();
    for proxy in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ] {
        cmd.env_remove(proxy);
    }
    cmd.env("NO_PROXY", "127.0.0.1");
    outcome(
        cmd.args(["prices", "update", "--url", url, "--out"])
            .arg(out)
            .output()
            .unwrap(),
    )
}

fn today() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    tracecost::cost::pricing::PriceDate::of_ms(ms).to_string()
}

#[test]
fn update_writes_the_prices_it_fetched_as_a_pricing_file() {
    let litellm = std::fs::read(fixture("pricing/litellm_small.json")).unwrap();
    let (url, server) = serve_once("200 OK", litellm.clone());
    let dir = tempfile::tempdir().unwrap();
    // A folder not made yet, as a config folder on a first update.
    let out = dir.path().join("config/tracecost/prices.json");
    let (code, stdout, stderr) = update(&url, &out);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        server
            .join()
            .unwrap()
            .starts_with("GET /model_prices_and_context_window.json HTTP/1.1")
    );
    let sha = tracecost::engine::handle::sha256_hex(&litellm);
    assert!(stderr.contains(&format!("(sha256 {sha})")), "{stderr}");
    assert!(stderr.contains("6 model(s) (3 new, 3 updated)"), "{stderr}");

    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["source"]["url"], url.as_str());
    assert_eq!(doc["source"]["sha256"], sha.as_str());
    assert_eq!(doc["source"]["fetched"], today().as_str());
    let models = doc["models"].as_object().unwrap();
    assert_eq!(models.len(), 6);
    assert!(
        models
            .values()
            .all(|m| m["effective_from"] == today().as_str())
    );
    // Only what the reader maps: no Azure, Bedrock or embedding entry.
    assert!(
        !models
            .keys()
            .any(|k| k.contains("azure") || k.contains("embed"))
    );
    assert_eq!(models["gpt-house-1"]["provider"], "openai");
    assert_eq!(models["gpt-house-1"]["context_window"], 400_000);

    // `--pricing` reads it: the new model is listed at its price.
    let (code, listed, stderr) = outcome(
        tracecost()
            .args(["models", "--format", "json", "--pricing"])
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let house = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "gpt-house-1")
        .unwrap_or_else(|| panic!("gpt-house-1 not in {listed}"));
    assert_eq!(
        (house["input"].as_f64(), house["output"].as_f64()),
        (Some(2.0), Some(16.0))
    );
}

#[test]
fn a_failed_update_names_the_address_and_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("prices.json");
    std::fs::write(&out, "{\"models\": {}}\n").unwrap();
    let kept = || std::fs::read_to_string(&out).unwrap();

    let (url, server) = serve_once("404 Not Found", b"no".to_vec());
    let (code, _, stderr) = update(&url, &out);
    server.join().unwrap();
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!("tracecost: {url}: the server answered HTTP 404")
    );
    assert_eq!(kept(), "{\"models\": {}}\n");

    // A file that is not LiteLLM's: an input error naming the address.
    let (url, server) = serve_once("200 OK", b"{\"models\": {}}".to_vec());
    let (code, _, stderr) = update(&url, &out);
    server.join().unwrap();
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with(&format!("tracecost: {url}: at /models:")),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(kept(), "{\"models\": {}}\n");

    // Nothing listening: the environment's failure, not the input's.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, _, stderr) = update(&format!("http://127.0.0.1:{port}/x.json"), &out);
    assert_ne!(code, 0);
    assert_ne!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot fetch"), "{stderr}");
    assert_eq!(kept(), "{\"models\": {}}\n");
}

/// A report names the price table that priced it: the built-in table's
/// day, and each file given with its path, the SHA-256 of its bytes and
/// where its prices were fetched, in `results.json`, `summary.md` and the
/// page.
#[test]
fn a_report_records_the_price_table_that_priced_it() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    let text = r#"{
  "source": {"url": "http://127.0.0.1/litellm.json", "sha256": "5eed", "fetched": "2026-11-30"},
  "models": {"claude-opus-4-1-20250805": {"effective_from": "2026-11-30", "input": 15, "output": 75}}
}
"#;
    std::fs::write(&prices, text).unwrap();
    let sha = tracecost::engine::handle::sha256_hex(text.as_bytes());
    let trace = crate::util::repo("traces/massage-gun.json");
    let report = |out: &Path, pricing: Option<&Path>| {
        let mut cmd = tracecost();
        cmd.arg("report").arg(&trace).arg("--out").arg(out).args([
            "--compaction",
            "off",
            "--cache",
            "none",
        ]);
        if let Some(p) = pricing {
            cmd.arg("--pricing").arg(p);
        }
        let (code, _, stderr) = outcome(cmd.output().unwrap());
        assert_eq!(code, 0, "{stderr}");
        let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
        let results: serde_json::Value = serde_json::from_str(&read("results.json")).unwrap();
        (results, read("summary.md"), read("index.html"))
    };
    let (results, summary, page) = report(&dir.path().join("with"), Some(&prices));
    let table = &results["assumptions"]["price_table"];
    assert_eq!(table["builtin"], "2026-12-06");
    let file = &table["files"][0];
    assert_eq!(file["path"], prices.display().to_string().as_str());
    assert_eq!(file["sha256"], sha.as_str());
    assert_eq!(file["format"], "native");
    assert_eq!(
        file["source"],
        serde_json::json!({"url": "http://127.0.0.1/litellm.json", "sha256": "5eed", "fetched": "2026-11-30"})
    );
    let line = format!(
        "the built-in price table of 2026-12-06, overridden by {} (sha256 {}…; from http://127.0.0.1/litellm.json, fetched 2026-11-30)",
        prices.display(),
        &sha[..12]
    );
    assert_eq!(results["assumptions"]["prices"], line.as_str());
    let prices_lines = summary
        .lines()
        .filter(|l| l.starts_with("Prices: "))
        .count();
    assert_eq!(prices_lines, 1, "{summary}");
    assert!(summary.contains(&sha[..12]), "{summary}");
    assert!(
        page.contains(&format!("<b>Prices:</b> {}", line.replace('&', "&amp;"))),
        "{page}"
    );

    let (results, summary, _) = report(&dir.path().join("without"), None);
    let table = &results["assumptions"]["price_table"];
    assert_eq!(table["files"], serde_json::json!([]));
    assert!(
        summary.contains("Prices: the built-in price table of 2026-12-06. "),
        "{summary}"
    );
}
