//! Interruptions: staging removed when the run is stopped.
//!
//! [`install`] blocks SIGINT, SIGTERM and SIGHUP in the calling thread
//! before any other thread exists, so every thread inherits the mask and
//! only one thread, which waits for them with `sigwait`, ever receives
//! them. That thread removes every staging path still registered and exits
//! with 128 + the signal's number, as the shell reports a process killed by
//! it. Doing the removal there, not in a signal handler, keeps it free of
//! the limits of async-signal safety. A kill that cannot be caught
//! (SIGKILL, a power cut) leaves the staging behind; the next run that
//! writes beside the same output removes it (`output::remove_stale_staging`).

use std::path::PathBuf;
use std::sync::Mutex;

/// The staging paths of this process that exist now.
static STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A staging path, registered for removal on interruption while this lives.
pub struct Staged(PathBuf);

impl Staged {
    /// Registers `path` (a file or a folder, there or about to be).
    pub fn register(path: PathBuf) -> Self {
        lock().push(path.clone());
        Staged(path)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let mut staging = lock();
        if let Some(i) = staging.iter().position(|p| *p == self.0) {
            staging.swap_remove(i);
        }
    }
}

/// Holds off the clean-up while it lives. Whoever creates a name inside a
/// staging path, or moves one into place, holds it: a file created while
/// the clean-up empties a staging folder would keep the folder from being
/// removed, and a report half moved into place would be removed with its
/// old self. Once the clean-up has begun, [`hold`] waits until the process
/// has exited. Never register or drop a [`Staged`] while holding it.
pub struct CleanupGuard(#[allow(dead_code)] std::sync::MutexGuard<'static, Vec<PathBuf>>);

/// See [`CleanupGuard`].
pub fn hold() -> CleanupGuard {
    CleanupGuard(lock())
}

fn lock() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere must not stop the clean-up.
    STAGING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every registered staging path. The lock is kept: nothing is
/// registered or committed after this.
fn remove_staging() {
    let staging = lock();
    for p in staging.iter() {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => {
                let _ = super::staged_removal::remove_staged(p);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(p);
            }
            Err(_) => {}
        }
    }
    std::mem::forget(staging);
}

/// Takes over SIGINT, SIGTERM and SIGHUP for this process. Call it first
/// thing in `main`, before any thread is started.
#[cfg(unix)]
pub fn install() {
    // SAFETY: plain libc calls on a local, zeroed signal set.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut sig: libc::c_int = 0;
            // SAFETY: `set` is a valid signal set blocked in every thread.
            if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                return;
            }
            remove_staging();
            // SAFETY: ends the process at once, as the signal would have;
            // nothing is left to flush that an interrupted run should write.
            unsafe { libc::_exit(128 + sig) }
        });
    if spawned.is_err() {
        // No thread to receive them: let the signals act as before.
        // SAFETY: as above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

#[cfg(not(unix))]
pub fn install() {}
