//! Shared by the importer targets: the fuzz input becomes one file on disk
//! (the importers' public entry point takes paths), imported with the
//! public `import(&[path], &opts)`.

use std::path::PathBuf;
use std::sync::OnceLock;

use tracecost_import::{ImportError, ImportOptions, ImportResult};

/// A per-process scratch directory, in RAM when /dev/shm exists.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("tracecost-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

/// The first byte chooses the options and the file extension (`.jsonl`,
/// `.json` or `.csv`, which several importers read differently); the rest
/// is the file.
pub fn run(
    data: &[u8],
    import: fn(&[PathBuf], &ImportOptions) -> Result<ImportResult, ImportError>,
) {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let ext = match (flags & 8 != 0, flags & 1 == 0) {
        (true, _) => "csv",
        (false, true) => "jsonl",
        (false, false) => "json",
    };
    let path = scratch().join(format!("input.{ext}"));
    std::fs::write(&path, body).expect("write the fuzz input");
    let opts = ImportOptions {
        skip_invalid: flags & 2 != 0,
        default_model: (flags & 4 != 0).then(|| "claude-sonnet-4-5".to_owned()),
    };
    let result = import(&[path.clone()], &opts);
    let _ = std::fs::remove_file(&path);
    match result {
        // Nothing imported: `tracecost import` reports it and writes no
        // file (exit 2), so there is no trace to load.
        Ok(out) if out.traces.is_empty() => {
            let _ = out.report.to_string();
        }
        Ok(out) => {
            // Whatever an importer writes must load again.
            let json = tracecost_trace::traces_to_json(&out.traces);
            if let Err(e) = tracecost_trace::load_str(&json, "imported") {
                panic!("an imported trace does not load: {e}\n{json}");
            }
            let _ = out.report.to_string();
        }
        Err(e) => {
            // Errors are one line that names the file.
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "multi-line error: {msg:?}");
        }
    }
}
