//! Tabs a page opens for itself (§3.4: closed and reported with their
//! address, so the session never moves onto a page nothing asked for).

use std::time::Duration;

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, GetTargetsParams, TargetId, TargetInfo,
};
use tokio::time::Instant;

/// How long a new tab may take to name the address it is opening.
const ADDRESS_WAIT: Duration = Duration::from_secs(1);

async fn others(browser: &Browser, own: &TargetId) -> Vec<TargetInfo> {
    match browser.execute(GetTargetsParams::default()).await {
        Ok(response) => response
            .result
            .target_infos
            .into_iter()
            .filter(|t| t.r#type == "page" && &t.target_id != own)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Closes every page but `own`, returning the addresses they were opening.
pub async fn close_others(browser: &Browser, own: &TargetId) -> Vec<String> {
    let mut found = others(browser, own).await;
    if found.is_empty() {
        return Vec::new();
    }
    // A tab opened by script is about:blank until its navigation commits.
    let deadline = Instant::now() + ADDRESS_WAIT;
    while found.iter().any(|t| blank(&t.url)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        found = others(browser, own).await;
    }
    let mut addresses = Vec::new();
    for tab in found {
        let _ = browser
            .execute(CloseTargetParams::new(tab.target_id.clone()))
            .await;
        addresses.push(if tab.url.is_empty() {
            "about:blank".to_string()
        } else {
            tab.url
        });
    }
    addresses
}

fn blank(url: &str) -> bool {
    url.is_empty() || url == "about:blank"
}
