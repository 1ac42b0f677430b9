//! `collegium-provision mattermost` (§3.1): with the admin credentials only
//! this program reads, refuse a server that cannot host the deployment
//! before creating anything, then converge it and write the bot tokens where
//! only the daemon's user can read them.

mod converge;
mod preflight;

use std::path::Path;

use collegium_control::chat::credentials::{self, CredentialsError};
use collegium_control::chat::{Rest, RestError};
use collegium_control::config::LoadedConfig;
use collegium_control::ownership;

pub use converge::TOKEN_DESCRIPTION;

#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error(
        "mattermost.admin is not configured: the provisioner needs an administrator's username and password, or token"
    )]
    NoAdmin,
    #[error("cannot read {key}: {reason}")]
    Secret { key: String, reason: String },
    #[error("the administrator credentials were refused: {0}")]
    Login(RestError),
    #[error("@{0} is not a system administrator; provisioning needs one")]
    NotAdmin(String),
    #[error("the server cannot host this deployment; nothing was created:\n  - {}", .0.join("\n  - "))]
    Refused(Vec<String>),
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Rest(#[from] RestError),
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    #[error("cannot give {path} to the daemon's user {user}: {reason}")]
    Ownership {
        path: String,
        user: String,
        reason: String,
    },
    #[error("deployment.daemon_user: {user}: {reason}")]
    DaemonUser { user: String, reason: String },
    #[error("cannot build an HTTP client: {0}")]
    Http(String),
}

/// What a run changed, one line each; empty when nothing did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub changes: Vec<String>,
}

pub async fn provision(loaded: &LoadedConfig) -> Result<Outcome, ProvisionError> {
    let config = &loaded.config;
    // Resolved before anything is touched: a token file the daemon cannot
    // read is a failed provisioning, found late.
    let owner = daemon_owner(config.deployment.daemon_user.as_deref())?;
    let rest =
        Rest::new(&config.mattermost.url).map_err(|e| ProvisionError::Http(e.to_string()))?;
    let admin = login(&rest, loaded).await?;
    let refusals = preflight::refusals(&admin, config).await?;
    if !refusals.is_empty() {
        return Err(ProvisionError::Refused(refusals));
    }
    let state_dir = &config.deployment.state_dir;
    let mut changes = Vec::new();
    if !state_dir.is_dir() {
        create_state_dir(state_dir, owner.as_ref())?;
        changes.push(format!(
            "created the state directory {}",
            state_dir.display()
        ));
    }
    let path = credentials::path(state_dir);
    let held = match credentials::load(&path) {
        Ok(held) => held,
        Err(CredentialsError::Missing { .. }) => Default::default(),
        Err(error) => return Err(error.into()),
    };
    let mut converger = converge::Converger::new(admin, loaded, held.clone());
    let result = converger.run().await;
    // Whatever was minted before a failure is kept, so a rerun does not mint
    // it again.
    let saved = converger.credentials != held;
    if saved {
        credentials::save(&path, &converger.credentials)?;
    }
    // A daemon user configured after an earlier run is given the file too.
    if give_to_daemon(&path, owner.as_ref())? && !saved {
        changes.push(format!("gave {} to the daemon's user", path.display()));
    }
    result?;
    changes.extend(converger.changes);
    Ok(Outcome { changes })
}

/// Logs in as the configured administrator and checks the role.
async fn login(rest: &Rest, loaded: &LoadedConfig) -> Result<Rest, ProvisionError> {
    let admin = loaded
        .config
        .mattermost
        .admin
        .as_ref()
        .ok_or(ProvisionError::NoAdmin)?;
    let reveal = |secret: &collegium_control::config::secret::Secret, key: &str| {
        secret.reveal().map_err(|e| ProvisionError::Secret {
            key: format!("mattermost.admin.{key}"),
            reason: e.to_string(),
        })
    };
    let session = match (&admin.username, &admin.password, &admin.token) {
        (Some(username), Some(password), _) => {
            let (_, token) = rest
                .login(username, reveal(password, "password")?.expose())
                .await
                .map_err(ProvisionError::Login)?;
            rest.with_token(&token)
        }
        (_, _, Some(token)) => rest.with_token(reveal(token, "token")?.expose()),
        _ => return Err(ProvisionError::NoAdmin),
    };
    let me = session.me().await.map_err(ProvisionError::Login)?;
    if !me.has_role("system_admin") {
        return Err(ProvisionError::NotAdmin(me.username));
    }
    Ok(session)
}

fn create_state_dir(dir: &Path, owner: Option<&nix::unistd::User>) -> Result<(), ProvisionError> {
    ownership::private_dir(dir).map_err(|e| CredentialsError::Write {
        path: dir.to_path_buf(),
        source: e,
    })?;
    give_to_daemon(dir, owner).map(drop)
}

/// The user the written files must be handed to: none when no daemon user is
/// configured or the provisioner already runs as it. Handing a file to
/// another user takes root, so anyone else is refused here, naming the user.
fn daemon_owner(daemon_user: Option<&str>) -> Result<Option<nix::unistd::User>, ProvisionError> {
    let Some(name) = daemon_user else {
        return Ok(None);
    };
    let refuse = |reason: String| ProvisionError::DaemonUser {
        user: name.to_string(),
        reason,
    };
    let user = nix::unistd::User::from_name(name)
        .map_err(|e| refuse(e.to_string()))?
        .ok_or_else(|| refuse("there is no such OS user; create it first".to_string()))?;
    let me = nix::unistd::geteuid();
    if me == user.uid {
        return Ok(None);
    }
    if !me.is_root() {
        return Err(refuse(format!(
            "only root can give it the token file; run the provisioner as root or as {name}"
        )));
    }
    Ok(Some(user))
}

/// Hands `path`, if it exists, to the daemon's user, so its mode 0600 (0700)
/// means the daemon alone. True when its owner changed.
fn give_to_daemon(path: &Path, owner: Option<&nix::unistd::User>) -> Result<bool, ProvisionError> {
    let Some(user) = owner else {
        return Ok(false);
    };
    if !path.exists() {
        return Ok(false);
    }
    ownership::give(path, user).map_err(|e| ProvisionError::Ownership {
        path: path.display().to_string(),
        user: user.name.clone(),
        reason: e.to_string(),
    })
}
