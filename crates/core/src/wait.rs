//! Waiting on a condition variable with a deadline, for the watchers that
//! wait until their own event came back (a barrier file's inotify event).

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Lock `m`, taking the value even when another thread panicked with it
/// held (the watchers' state stays consistent between statements).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Wait on `cv` (notified whenever `m`'s value changes) until `done` holds
/// for the value or `within` has passed; true when it held.
pub fn wait_until<T>(
    m: &Mutex<T>,
    cv: &Condvar,
    within: Duration,
    done: impl Fn(&T) -> bool,
) -> bool {
    let deadline = Instant::now() + within;
    let mut st = lock(m);
    while !done(&st) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        st = match cv.wait_timeout(st, left) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        };
    }
    true
}
