//! A worker tells its service manager it is ready once its socket is placed
//! and served (issue 21, item 4): a unit ordered after it (the daemon's) then
//! starts only when the handshake can succeed. Without `NOTIFY_SOCKET` (a
//! worker started by hand, by the tests, or as the daemon's plugin, whose
//! environment drops it) this is a no-op.

use std::path::Path;

/// Says `READY=1` with the socket served; a failure to say it is reported
/// in the log and is not fatal: the unit's start timeout then says so.
pub fn serving(socket: &Path) {
    let status = format!("serving on {}", socket.display());
    let said = sd_notify::notify(&[
        sd_notify::NotifyState::Ready,
        sd_notify::NotifyState::Status(&status),
    ]);
    if let Err(error) = said {
        tracing::warn!(%error, "the service manager could not be told this worker is ready");
    }
}
