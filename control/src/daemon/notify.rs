//! What the daemon tells its service manager (issue 21, item 4), all in one
//! place: `STATUS=` per boot phase, `EXTEND_TIMEOUT_USEC=` while the models
//! are verified, `READY=1` only once the boot is complete (migrations,
//! Mattermost checks, model verification, worker handshakes and the restart
//! sweep with its notice, §7.3), `WATCHDOG=1` only while the store thread and
//! the event loop answer a liveness probe, and `STOPPING=1` on a stop signal
//! before the stop itself.
//!
//! Without `NOTIFY_SOCKET` every message is a no-op, so a daemon started by
//! hand or by the tests behaves as before. A message that cannot be sent is
//! logged, never fatal: the service manager's own timeouts then say so.

use std::time::Duration;

use sd_notify::NotifyState;
use tokio::task::JoinHandle;
use tracing::{info, warn};

use crate::store::StoreHandle;

/// The boot's phases, in order, each said as `STATUS=` when it begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The store is open and migrated; the models are being verified.
    VerifyingModels,
    /// Mattermost's provisioning and the bots' accounts are checked.
    CheckingMattermost,
    /// Plugins start and the framework workers' handshakes run.
    ConnectingWorkers,
    /// This run is recorded, the previous one swept and the notice posted.
    Recovering,
    /// Every check passed and the agents listen.
    Serving,
    /// A stop signal arrived; the clean stop is being recorded.
    Stopping,
}

impl Phase {
    /// The `STATUS=` text: what `systemctl status` shows an operator.
    pub fn status(self) -> &'static str {
        match self {
            Self::VerifyingModels => "store migrated; verifying models",
            Self::CheckingMattermost => "checking Mattermost",
            Self::ConnectingWorkers => "starting plugins and connecting workers",
            Self::Recovering => {
                "recording this run, sweeping the previous one, posting the boot notice"
            }
            Self::Serving => "serving",
            Self::Stopping => "stopping",
        }
    }
}

/// Says the phase that begins.
pub fn phase(phase: Phase) {
    send(&[NotifyState::Status(phase.status())]);
}

/// Asks for `extra` more start-up time while the models are verified: each
/// check is bounded, but together with the other phases they can outlast
/// `TimeoutStartSec=`.
pub fn extend_start(extra: Duration) {
    let usec = u32::try_from(extra.as_micros()).unwrap_or(u32::MAX);
    send(&[NotifyState::ExtendTimeoutUsec(usec)]);
}

/// The boot is complete: said once, after the boot notice was posted.
pub fn ready() {
    send(&[
        NotifyState::Ready,
        NotifyState::Status(Phase::Serving.status()),
    ]);
}

/// A stop signal arrived: said before the stop is recorded, so a stop that
/// waits on a slow store is known to be one.
pub fn stopping() {
    send(&[
        NotifyState::Stopping,
        NotifyState::Status(Phase::Stopping.status()),
    ]);
}

fn send(states: &[NotifyState<'_>]) {
    if let Err(error) = sd_notify::notify(states) {
        warn!(%error, "the service manager could not be notified");
    }
}

/// How often the watchdog probes and pings, and how long each probe may
/// take, for a `WATCHDOG_USEC` of `timeout`: a ping every half timeout, as
/// sd_watchdog_enabled(3) advises, and a probe bounded by a quarter so a
/// healthy daemon's ping is never late.
pub fn watchdog_timing(timeout: Duration) -> (Duration, Duration) {
    (timeout / 2, timeout / 4)
}

/// Starts the watchdog when the service manager asked for one
/// (`WATCHDOG_USEC`, for this process): every period, a store round-trip and
/// a task on the runtime must both answer within the bound before
/// `WATCHDOG=1` is sent. A wedged store thread or a starved event loop thus
/// stops the pings and the service manager restarts the daemon.
pub fn watchdog(store: StoreHandle) -> Option<JoinHandle<()>> {
    let timeout = sd_notify::watchdog_enabled()?;
    let (period, bound) = watchdog_timing(timeout);
    info!(
        timeout_ms = timeout.as_millis(),
        period_ms = period.as_millis(),
        "watchdog enabled"
    );
    Some(tokio::spawn(async move {
        let mut every = tokio::time::interval(period);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut was_healthy = true;
        loop {
            every.tick().await;
            match probe(&store, bound).await {
                Ok(()) => {
                    if !was_healthy {
                        info!("the liveness probe answers again; watchdog pings resume");
                    }
                    was_healthy = true;
                    send(&[NotifyState::Watchdog]);
                }
                Err(unanswered) => {
                    if was_healthy {
                        warn!(%unanswered, "the liveness probe went unanswered; watchdog pings stop");
                    }
                    was_healthy = false;
                }
            }
        }
    }))
}

/// What did not answer the liveness probe in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    #[error("the store thread did not answer a round-trip in time")]
    Store,
    #[error("the store thread is gone")]
    StoreClosed,
    #[error("a task on the runtime did not run in time")]
    EventLoop,
}

/// One liveness probe: a store call round-trip and a task spawned on the
/// runtime, each answering within `bound`.
pub async fn probe(store: &StoreHandle, bound: Duration) -> Result<(), Unanswered> {
    let runtime = tokio::time::timeout(bound, tokio::spawn(async {}));
    if !matches!(runtime.await, Ok(Ok(()))) {
        return Err(Unanswered::EventLoop);
    }
    match tokio::time::timeout(bound, store.call(|_| Ok(()))).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Unanswered::StoreClosed),
        Err(_) => Err(Unanswered::Store),
    }
}

/// A test hook, built only with the `test-hooks` feature the end-to-end
/// build enables (a release build carries none, issue 21 item 8): SIGUSR1
/// wedges the store thread for `wedge`, so the tests can see the watchdog's
/// pings stop.
#[cfg(feature = "test-hooks")]
pub fn wedge_hook(store: StoreHandle, wedge: Duration) -> std::io::Result<JoinHandle<()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut user1 = signal(SignalKind::user_defined1())?;
    Ok(tokio::spawn(async move {
        while user1.recv().await.is_some() {
            warn!(
                wedge_ms = wedge.as_millis(),
                "test hook: wedging the store thread"
            );
            let store = store.clone();
            tokio::spawn(async move {
                let _ = store
                    .call(move |_| {
                        std::thread::sleep(wedge);
                        Ok(())
                    })
                    .await;
            });
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, StoreHandle) {
        let dir = tempfile::tempdir().expect("dir");
        let store = crate::store::Store::open(&dir.path().join("s.db")).expect("store");
        (dir, StoreHandle::spawn(store).expect("thread"))
    }

    #[test]
    fn i21_watchdog_pings_at_half_the_timeout_and_bounds_the_probe_by_a_quarter() {
        let (period, bound) = watchdog_timing(Duration::from_secs(30));
        assert_eq!(period, Duration::from_secs(15));
        assert_eq!(bound, Duration::from_millis(7500));
    }

    #[tokio::test]
    async fn i21_a_healthy_store_and_runtime_answer_the_probe() {
        let (_dir, store) = store();
        assert_eq!(probe(&store, Duration::from_secs(1)).await, Ok(()));
    }

    #[tokio::test]
    async fn i21_a_wedged_store_thread_fails_the_probe() {
        let (_dir, store) = store();
        let wedged = store.clone();
        tokio::spawn(async move {
            let _ = wedged
                .call(|_| {
                    std::thread::sleep(Duration::from_millis(600));
                    Ok(())
                })
                .await;
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            probe(&store, Duration::from_millis(100)).await,
            Err(Unanswered::Store)
        );
        // Once the store answers again, so does the probe.
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert_eq!(probe(&store, Duration::from_secs(1)).await, Ok(()));
    }

    #[test]
    fn i21_every_phase_says_a_distinct_status() {
        let phases = [
            Phase::VerifyingModels,
            Phase::CheckingMattermost,
            Phase::ConnectingWorkers,
            Phase::Recovering,
            Phase::Serving,
            Phase::Stopping,
        ];
        let mut said: Vec<&str> = phases.iter().map(|p| p.status()).collect();
        said.sort();
        said.dedup();
        assert_eq!(said.len(), phases.len());
    }
}
